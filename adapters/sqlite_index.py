"""The SQLite backend's reads of what a launch's section is assembled from: the index of live
records, the names removed, and the compact's JSON.

Plain rows, without the record models: the backend reads through these, and so does the
launch hook, on a reader of its own (sqlite_reader.py), without importing pydantic.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.kinds import RECORD_TYPES

INDEX_QUERY = (
    "SELECT name, type, description, revision, updated_at FROM records "
    "WHERE deleted = 0 ORDER BY name"
)
"""The index of live records; the records_live_index covers it, so no body is ever read."""
INDEX_BATCH = 1_000
"""Index entries read from the cursor at a time."""
REMOVED_QUERY = "SELECT name FROM records WHERE deleted = 1 ORDER BY name"
COMPACT_QUERY = "SELECT content FROM compact WHERE slot = 1"


def index(connection: sqlite3.Connection) -> list[IndexEntry]:
    """Every live record's index entry, ordered by name."""
    entries: list[IndexEntry] = []
    for batch in index_batches(connection):
        entries += batch
    return entries


def index_batches(connection: sqlite3.Connection) -> Iterator[list[IndexEntry]]:
    """Every live record's index entry, ordered by name, INDEX_BATCH at a time.

    Straight from the cursor, so no list of rows, nor of the whole index, is ever held.
    """
    cursor = connection.execute(INDEX_QUERY)
    parse = datetime.fromisoformat
    while rows := cursor.fetchmany(INDEX_BATCH):
        yield [
            IndexEntry(name, RECORD_TYPES[type_], description, revision, parse(updated_at))
            for name, type_, description, revision, updated_at in rows
        ]


def removed_since(connection: sqlite3.Connection, watermark: Mapping[str, int]) -> list[str]:
    """Names in watermark that are tombstoned now, in name order."""
    return [name for (name,) in connection.execute(REMOVED_QUERY) if name in watermark]


def compact_json(connection: sqlite3.Connection) -> Any:
    """The compact slot's content as stored (the compact's JSON, unless the file was changed
    behind the store's back), or None when the slot is empty."""
    row = connection.execute(COMPACT_QUERY).fetchone()
    return None if row is None else row[0]
