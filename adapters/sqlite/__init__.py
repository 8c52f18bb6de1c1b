"""The SQLite backend, the embedded default: storage.py is the Storage port; the rest its parts.

Importing this package imports nothing: the launch hook reads index.py and reader.py alone."""
