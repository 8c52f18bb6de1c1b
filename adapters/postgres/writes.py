"""The PostgreSQL write path, inside a write's transaction: lock a name, append, touch.

A record write takes a transaction-level advisory lock on (project, name), reads the name's
latest revision, writes the record row, appends the history entry numbered by the project's
counter row (locked until commit, so history order is commit order, without gaps) and
announces the write (postgres/notifications.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lazy_memory.adapters.postgres.notifications import announce
from lazy_memory.adapters.postgres.search import search_columns
from lazy_memory.adapters.postgres.text import json_list, stored, text_list
from lazy_memory.adapters.sql_rows import HISTORY_COLUMNS, RECORD_COLUMNS
from lazy_memory.engine.records import HistoryEntry

if TYPE_CHECKING:
    from lazy_memory.adapters.postgres.connections import Connection

UPSERT_RECORD = (
    f"INSERT INTO lazy_records (project, {RECORD_COLUMNS}, deleted, search, search_length) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    f"array_to_tsvector({text_list(12)}), $13) "
    "ON CONFLICT (project, name) DO UPDATE SET type = excluded.type, "
    "description = excluded.description, body = excluded.body, "
    "provenance = excluded.provenance, revision = excluded.revision, "
    "deleted = excluded.deleted, updated_at = excluded.updated_at, "
    "actor_kind = excluded.actor_kind, actor_detail = excluded.actor_detail, "
    "search = excluded.search, search_length = excluded.search_length"
)
"""The record row of a write: RECORD_COLUMNS' values after the project, then the rest."""
APPEND_HISTORY = (
    "WITH counter AS (INSERT INTO lazy_projects (project, last_seq) VALUES ($1, 1) "
    "ON CONFLICT (project) DO UPDATE SET last_seq = lazy_projects.last_seq + 1 "
    "RETURNING last_seq) "
    f"INSERT INTO lazy_history (project, seq, {HISTORY_COLUMNS}) "
    "VALUES ($1, (SELECT last_seq FROM counter), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
)
"""The history entry of a write, numbered by the project's counter: HISTORY_COLUMNS' values
after the project."""


async def lock_name(connection: Connection, project: str, name: str) -> int:
    """Lock name until commit (it may have no row yet) and return its latest revision."""
    await connection.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", project, stored(name)
    )
    # A statement of its own: in READ COMMITTED it sees what the lock's holder committed.
    revision = await connection.fetchval(
        "SELECT revision FROM lazy_records WHERE project = $1 AND name = $2",
        project,
        stored(name),
    )
    return 0 if revision is None else int(revision)


async def touch_project(connection: Connection, project: str) -> None:
    """Give the project's counter row a new version without taking a history number.

    That moves the change marker for a write that appends no history: the compact slot's.
    """
    await connection.execute(
        "INSERT INTO lazy_projects (project, last_seq) VALUES ($1, 0) "
        "ON CONFLICT (project) DO UPDATE SET last_seq = lazy_projects.last_seq",
        project,
    )


async def append(
    connection: Connection, project: str, entry: HistoryEntry, *, deleted: bool
) -> None:
    """Make entry the name's current state, append it to the history, and announce it."""
    name, description, body, detail = (
        stored(text) for text in (entry.name, entry.description, entry.body, entry.actor.detail)
    )
    provenance = None if entry.provenance is None else entry.provenance.model_dump_json()
    # Both column lists (sql_rows.py) start and end alike; only what stands between differs.
    leading = (name, entry.type.value, description, body, entry.revision)
    trailing = (entry.actor.kind.value, detail, provenance)
    await connection.execute(
        UPSERT_RECORD, project, *leading, entry.at, *trailing, deleted, *search_values(entry)
    )
    await connection.execute(
        APPEND_HISTORY, project, *leading, entry.operation.value, entry.at, *trailing
    )
    await announce(connection, project, entry)


def search_values(entry: HistoryEntry) -> tuple[str | None, int]:
    """UPSERT_RECORD's last two values for entry: its lexemes as text_list reads them (JSON,
    which a SQL_ASCII client can send), and its search length."""
    search = search_columns(entry)
    return None if search.lexemes is None else json_list(search.lexemes), search.length
