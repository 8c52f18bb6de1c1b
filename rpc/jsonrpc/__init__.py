"""The JSON-RPC engine: the pygls server (`lazy engine`), the daemon, and their plumbing."""
