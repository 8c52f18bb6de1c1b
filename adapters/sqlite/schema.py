"""The SQLite schema as an ordered list of named migrations, recorded in the database.

Old migrations are never edited: a database that applied one keeps it, so every change to the
schema is a new migration at the end.
"""

from __future__ import annotations

from lazy_memory.adapters.migrations import Migration
from lazy_memory.adapters.sqlite.space import FTS_SETTINGS

_RECORD_COLUMNS = (
    "name, type, description, body, revision, deleted, updated_at, actor_kind, actor_detail, "
    "provenance"
)
_INDEX_NEW = (
    "INSERT INTO records_fts (rowid, name, description, body) "
    "SELECT new.id, new.name, new.description, new.body"
)
# An external-content index forgets a row only when told its exact old values.
_UNINDEX_OLD = (
    "INSERT INTO records_fts (records_fts, rowid, name, description, body) "
    "SELECT 'delete', old.id, old.name, old.description, old.body"
)

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
    (
        "0004_search",
        (
            # FTS5 keys its index by an integer that must never change, and VACUUM may
            # renumber an implicit rowid: records is rebuilt around an INTEGER PRIMARY KEY.
            """CREATE TABLE records_keyed (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL UNIQUE,
                type TEXT NOT NULL,
                description TEXT NOT NULL,
                body TEXT NOT NULL,
                revision INTEGER NOT NULL,
                deleted INTEGER NOT NULL DEFAULT 0,
                updated_at TEXT NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_detail TEXT NOT NULL,
                provenance TEXT
            )""",
            f"INSERT INTO records_keyed ({_RECORD_COLUMNS}) "
            f"SELECT {_RECORD_COLUMNS} FROM records ORDER BY rowid",
            "DROP TABLE records",
            "ALTER TABLE records_keyed RENAME TO records",
            # The index covers live records only; as its content table, this view also keeps
            # FTS5's own 'rebuild' and 'integrity-check' commands right.
            "CREATE VIEW live_records AS "
            "SELECT id, name, description, body FROM records WHERE deleted = 0",
            # Tokens as engine/search_model.py makes them: letters and digits, case folded, accents
            # kept (remove_diacritics 0), no stemming.
            "CREATE VIRTUAL TABLE records_fts USING fts5(name, description, body, "
            "content='live_records', content_rowid='id', "
            "tokenize='unicode61 remove_diacritics 0')",
            # Triggers keep the index in step inside the very transaction of each write.
            "CREATE TRIGGER records_fts_after_insert AFTER INSERT ON records "
            "WHEN new.deleted = 0 BEGIN "
            f"{_INDEX_NEW}; "
            "END",
            "CREATE TRIGGER records_fts_after_update AFTER UPDATE ON records BEGIN "
            f"{_UNINDEX_OLD} WHERE old.deleted = 0; "
            f"{_INDEX_NEW} WHERE new.deleted = 0; "
            "END",
            "CREATE TRIGGER records_fts_after_delete AFTER DELETE ON records "
            "WHEN old.deleted = 0 BEGIN "
            f"{_UNINDEX_OLD}; "
            "END",
            "INSERT INTO records_fts (rowid, name, description, body) "
            "SELECT id, name, description, body FROM live_records",
        ),
    ),
    (
        "0005_live_index",
        (
            # Every column the index of live records reads (the launch context, compaction,
            # the live revisions), in name order: those reads never touch a body.
            "CREATE INDEX records_live_index "
            "ON records (deleted, name, type, description, revision)",
        ),
    ),
    (
        "0006_live_index_updated_at",
        (
            # The index of live records shows when each was written: the covering index
            # takes updated_at too, so that read still never touches a body.
            "DROP INDEX records_live_index",
            "CREATE INDEX records_live_index "
            "ON records (deleted, name, type, description, revision, updated_at)",
        ),
    ),
    # The search index merges after each write, not inside it (sqlite/space.py).
    ("0007_search_merges_apart", FTS_SETTINGS),
)

SCHEMA_VERSION = len(MIGRATIONS)
"""The database's user_version once every migration is applied: a writer that finds it needs
to read nothing else to know that there is nothing to migrate (sqlite/writer.py)."""

READ_NEUTRAL = frozenset(
    {"0005_live_index", "0006_live_index_updated_at", "0007_search_merges_apart"}
)
"""Migrations that change nothing a read depends on (an index added or replaced, the search
index's merge settings): a database without them reads the same, perhaps slower, so a store
that cannot be written yet is read without them."""
