"""The PostgreSQL schema as an ordered list of named migrations, recorded in the database.

Every table is keyed by project, so one database serves many projects. Names sort in the
"C" collation (code point order), as every other backend sorts them, whatever the
database's locale. The JSON columns are `json`, not `jsonb`: they keep the text verbatim,
an escaped NUL included. The search columns are written with each record, in its
transaction (see postgres/search.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_memory.adapters.migrations import Migration, unapplied

if TYPE_CHECKING:
    from lazy_memory.adapters.postgres.connections import Connection

MIGRATIONS_TABLE = "lazy_schema_migrations"
MIGRATION_LOCK = 0x6C617A79_6D656D6F
"""The advisory lock key ("lazymemo") that serializes schema migrations across processes."""

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


async def migrate(connection: Connection, store: str) -> None:
    """Apply the migrations the database lacks, in connection's transaction.

    The advisory lock makes concurrent first opens safe: one process applies the
    migrations, the others wait for its commit and then find nothing left to do.
    """
    await connection.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
    await connection.execute(
        f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
        "(name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    applied = {
        row["name"] for row in await connection.fetch(f"SELECT name FROM {MIGRATIONS_TABLE}")
    }
    for name, statements in unapplied(MIGRATIONS, applied, store):
        for statement in statements:
            await connection.execute(statement)
        await connection.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES ($1)", name)
