"""What crosses the wire: method names, params and result models, error codes, framing.

The floor both ends of the engine's JSON-RPC protocol build on: the server (`rpc/`) and the
remote backend (`adapters/remote/storage.py`). It imports only the engine's types, never `rpc` or
`adapters` (import-linter holds it to that: pyproject.toml).
"""
