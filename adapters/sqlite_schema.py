"""The SQLite schema as an ordered list of named migrations, recorded in the database."""

from __future__ import annotations

Migration = tuple[str, tuple[str, ...]]
"""A migration: its name, recorded once applied, and the statements it runs."""

MIGRATIONS: tuple[Migration, ...] = (
    (
        "0001_records_and_history",
        (
            """CREATE TABLE records (
                name TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                description TEXT NOT NULL,
                body TEXT NOT NULL,
                revision INTEGER NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0,
                updated_at TEXT NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_detail TEXT NOT NULL
            )""",
            """CREATE TABLE history (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL,
                revision INTEGER NOT NULL,
                operation TEXT NOT NULL,
                type TEXT NOT NULL,
                description TEXT NOT NULL,
                body TEXT NOT NULL,
                at TEXT NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_detail TEXT NOT NULL,
                UNIQUE (name, revision)
            )""",
        ),
    ),
    (
        "0002_compact_slot",
        (
            "CREATE TABLE compact "
            "(slot INTEGER PRIMARY KEY CHECK (slot = 1), content TEXT NOT NULL)",
        ),
    ),
    (
        "0003_provenance",
        (
            "ALTER TABLE records ADD COLUMN provenance TEXT",
            "ALTER TABLE history ADD COLUMN provenance TEXT",
        ),
    ),
)
