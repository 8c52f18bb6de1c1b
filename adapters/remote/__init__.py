"""The remote backend: storage.py is the Storage port, spoken to a daemon over JSON-RPC."""
