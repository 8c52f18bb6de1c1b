"""The PostgreSQL schema as an ordered list of named migrations, recorded in the database.

Every table is keyed by project, so one database serves many projects. Names sort in the
"C" collation (code point order), as every other backend sorts them, whatever the
database's locale. The JSON columns are `json`, not `jsonb`: they keep the text verbatim,
an escaped NUL included. The search columns are written with each record, in its
transaction (see postgres_search.py).
"""

from __future__ import annotations

from lazy_memory.adapters.migrations import Migration

MIGRATIONS_TABLE = "lazy_schema_migrations"

MIGRATIONS: tuple[Migration, ...] = (
    (
        "0001_records_history_and_compacts",
        (
            """CREATE TABLE lazy_records (
                project TEXT NOT NULL,
                name TEXT COLLATE "C" NOT NULL,
                type TEXT NOT NULL,
                description TEXT NOT NULL,
                body TEXT NOT NULL,
                provenance JSON,
                revision INTEGER NOT NULL,
                deleted BOOLEAN NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_detail TEXT NOT NULL,
                search TSVECTOR,
                search_length INTEGER NOT NULL,
                PRIMARY KEY (project, name)
            )""",
            "CREATE INDEX lazy_records_search ON lazy_records USING GIN (search)",
            # last_seq numbers a project's history; its row lock, held to commit, makes the
            # numbers follow commit order with no gaps.
            """CREATE TABLE lazy_projects (
                project TEXT PRIMARY KEY,
                last_seq BIGINT NOT NULL
            )""",
            """CREATE TABLE lazy_history (
                project TEXT NOT NULL,
                seq BIGINT NOT NULL,
                name TEXT COLLATE "C" NOT NULL,
                revision INTEGER NOT NULL,
                operation TEXT NOT NULL,
                type TEXT NOT NULL,
                description TEXT NOT NULL,
                body TEXT NOT NULL,
                provenance JSON,
                at TIMESTAMPTZ NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_detail TEXT NOT NULL,
                PRIMARY KEY (project, seq),
                UNIQUE (project, name, revision)
            )""",
            """CREATE TABLE lazy_compacts (
                project TEXT PRIMARY KEY,
                content JSON NOT NULL
            )""",
        ),
    ),
)
