"""The JSON-files backend: storage.py is the Storage port over a JSON Lines journal."""
