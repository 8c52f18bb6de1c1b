"""The SQLite backend's reads of what a launch's section is assembled from: the index of live
records, the names removed, and the compact's JSON.

Plain rows, without the record models: the backend reads through these, and so does the
launch hook, on a reader of its own (sqlite/reader.py), without importing pydantic. Each row
is checked (row_checks.py): one that does not read is named in the list the caller gives,
with why, and left out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from lazy_memory.adapters.row_checks import index_entries
from lazy_memory.engine.index import IndexEntry, UnreadableRecord

INDEX_QUERY = (
    "SELECT name, type, description, revision, updated_at FROM records "
    "WHERE deleted = 0 ORDER BY name"
)
"""The index of live records; the records_live_index covers it, so no body is ever read."""
INDEX_BATCH = 1_000
"""Index entries read from the cursor at a time."""
REMOVED_QUERY = "SELECT name FROM records WHERE deleted = 1 ORDER BY name"
COMPACT_QUERY = "SELECT content FROM compact WHERE slot = 1"


def index(connection: sqlite3.Connection, failed: list[UnreadableRecord]) -> list[IndexEntry]:
    """Every live record's index entry, ordered by name; those that do not read go to failed."""
    entries: list[IndexEntry] = []
    for batch in index_batches(connection, failed):
        entries += batch
    return entries


def index_batches(
    connection: sqlite3.Connection, failed: list[UnreadableRecord]
) -> Iterator[list[IndexEntry]]:
    """Every live record's index entry, ordered by name, INDEX_BATCH at a time; the records
    whose rows do not read go to failed (emptied first: a read made again starts afresh).

    Straight from the cursor, so no list of rows, nor of the whole index, is ever held.
    """
    failed.clear()
    cursor = connection.execute(INDEX_QUERY)
    parse = datetime.fromisoformat
    while rows := cursor.fetchmany(INDEX_BATCH):
        yield index_entries(rows, parse, failed)


def removed_since(connection: sqlite3.Connection, watermark: Mapping[str, int]) -> list[str]:
    """Names in watermark that are tombstoned now, in name order."""
    return [name for (name,) in connection.execute(REMOVED_QUERY) if name in watermark]


def compact_json(connection: sqlite3.Connection) -> Any:
    """The compact slot's content as stored (the compact's JSON, unless the file was changed
    behind the store's back), or None when the slot is empty."""
    row = connection.execute(COMPACT_QUERY).fetchone()
    return None if row is None else row[0]
