"""The SQLite backend's statements on its records table: a write's row, revisions.

The columns and the mapping of a row to a record are the SQL backends' shared ones
(sql_rows.py); what is here is SQLite's own SQL. What a launch's section is read from (the
index, the names removed, the compact) is sqlite/index.py's.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from lazy_memory.adapters.sql_rows import HISTORY_COLUMNS, Dialect
from lazy_memory.engine.names import name_key, spellings_among
from lazy_memory.engine.records import Actor, Operation, RecordContent

DIALECT = Dialect(text=None, time=datetime.fromisoformat)
"""SQLite keeps text as written and times as ISO text."""
UPSERT_RECORD = (
    "INSERT INTO records (name, type, description, body, revision, deleted, updated_at, "
    "actor_kind, actor_detail, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name) DO UPDATE SET type = excluded.type, "
    "description = excluded.description, body = excluded.body, "
    "revision = excluded.revision, deleted = excluded.deleted, "
    "updated_at = excluded.updated_at, actor_kind = excluded.actor_kind, "
    "actor_detail = excluded.actor_detail, provenance = excluded.provenance"
)
APPEND_HISTORY = f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
LIVE_REVISIONS_QUERY = "SELECT name, revision FROM records WHERE deleted = 0"
# The names that may be another spelling of a name the store does not hold as it is
# (engine/names.py): its NFC form, and every name outside ASCII (more bytes than characters),
# as only those can differ from their own.
_SPELLINGS_QUERY = (
    "SELECT name FROM records WHERE name = ? OR length(name) < length(CAST(name AS BLOB))"
)


class Row:
    """A write's values as the records and history tables hold them."""

    def __init__(
        self,
        content: RecordContent,
        provenance: str | None,
        operation: Operation,
        actor: Actor,
        at: str,
    ) -> None:
        self.content = content
        self.provenance = provenance
        self.operation = operation
        self.actor = actor
        self.at = at

    def write(self, connection: sqlite3.Connection, revision: int, *, deleted: bool) -> None:
        """Make this the name's current state as revision, and append it to the history."""
        content, actor = self.content, self.actor
        connection.execute(
            UPSERT_RECORD,
            (
                content.name,
                content.type.value,
                content.description,
                content.body,
                revision,
                int(deleted),
                self.at,
                actor.kind.value,
                actor.detail,
                self.provenance,
            ),
        )
        connection.execute(
            APPEND_HISTORY,
            (
                content.name,
                content.type.value,
                content.description,
                content.body,
                revision,
                self.operation.value,
                self.at,
                actor.kind.value,
                actor.detail,
                self.provenance,
            ),
        )


def latest_revision_and_size(connection: sqlite3.Connection, name: str) -> tuple[int, int]:
    """The name's latest revision (0 if never written) and the bytes of its text, if live."""
    row = connection.execute(
        "SELECT revision, CASE deleted WHEN 0 THEN length(CAST(name || description || body "
        "AS BLOB)) ELSE 0 END FROM records WHERE name = ?",
        (name,),
    ).fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1]))


def spellings(connection: sqlite3.Connection, name: str) -> list[str]:
    """The names held, live or removed, that are the same name as name, in name order: a
    lookup by the name's index, and a scan only for a name not held as it is."""
    if connection.execute("SELECT 1 FROM records WHERE name = ?", (name,)).fetchone():
        return [name]
    rows = connection.execute(_SPELLINGS_QUERY, (name_key(name),))
    return spellings_among(name, [held for (held,) in rows])
