"""The PostgreSQL backend: storage.py is the Storage port over asyncpg; the rest its parts."""
