"""The SQLite backend on a full disk: what a save needs, and the index's merging kept apart.

FTS5 merges its index segments as it goes: by default every 64 leaf pages written, the
commit that crosses the mark also rewrites 64 pages per level of the index, about half a
megabyte on a small store. After the disk filled, a 64-byte save then kept failing until
that much was free, whatever its own size. So the index's automatic merging is off
(migration 0007 in sqlite/schema.py: automerge 0, and a crisis merge only past
CRISIS_SEGMENTS segments on one level) and each write does a little merging itself
(merging()), only while the disk has MERGE_ROOM free. On a fuller disk a save writes only
itself; a refused one says how much room it needs (full_disk_reason, save_needs) and
succeeds once that much is free.
"""

from __future__ import annotations

import errno
import math
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")

MERGE_PAGES = 16
"""Leaf pages of merged index written by each write at most: more than FTS5's automatic
merging does on average for a save (64 per level every 64 written), so the index keeps up."""
CRISIS_SEGMENTS = 64
"""Segments on one level of the index at which a write merges them itself: reached only when
that many writes found no room (or time) to merge after them."""
FTS_SETTINGS = (
    "INSERT INTO records_fts (records_fts, rank) VALUES ('automerge', 0)",
    f"INSERT INTO records_fts (records_fts, rank) VALUES ('crisismerge', {CRISIS_SEGMENTS})",
)
MERGE_ROOM = 4 << 20
"""Free bytes below which writes leave the index's merging for later: far more than
MERGE_PAGES pages, so a merge never fills the disk under a save."""
_MERGE = f"INSERT INTO records_fts (records_fts, rank) VALUES ('merge', {MERGE_PAGES})"
_FIXED_PAGES = 16
"""Pages every save touches whatever its size: the records and history tables and their
indexes, the index's new segment, its structure, averages and document sizes, the WAL's
own bookkeeping."""


def merging(
    work: Callable[[sqlite3.Connection], _T], path: Path
) -> Callable[[sqlite3.Connection], _T]:
    """work, then up to MERGE_PAGES pages of the index's merging when the disk holding the
    database at path has MERGE_ROOM free; on a fuller disk the merging waits for a later write.
    """

    def work_then_merge(connection: sqlite3.Connection) -> _T:
        result = work(connection)
        if (_free(path.parent) or 0) >= MERGE_ROOM:
            connection.execute(_MERGE)
        return result

    return work_then_merge


def save_needs(text_bytes: int, replaced_bytes: int, page_size: int = 4096) -> int:
    """Free bytes a save needs at most, from the UTF-8 bytes of its text (name, description
    and body) and of the live revision's it replaces, with a quarter to spare.

    Its text is written three times (the record, its history entry, the index's new terms)
    and the replaced text once more (the index's deletion of the old terms).
    """
    pages = _FIXED_PAGES + 3 * _pages(text_bytes, page_size) + _pages(replaced_bytes, page_size)
    return page_size * pages * 5 // 4


def _pages(count: int, page_size: int) -> int:
    return math.ceil(count / page_size)


def disk_full(error: BaseException) -> bool:
    """True if error is SQLite's or the OS's way of saying the disk is full."""
    if isinstance(error, OSError):
        return error.errno == errno.ENOSPC
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_FULL


def full_disk_reason(path: Path, needs: int) -> str:
    """How full the disk holding the database at path is, and how much room a write needs."""
    room = _free(path.parent)
    free = (
        f"free space in {path.parent} unknown"
        if room is None
        else (f"{_size(room)} free in {path.parent}")
    )
    return f"{free}; this save needs about {_size(needs)} free" if needs else free


def _free(folder: Path) -> int | None:
    try:
        status = os.statvfs(folder)
    except OSError:
        return None
    return status.f_bavail * status.f_frsize


def _size(count: int) -> str:
    if count < 1024 * 1024:
        return f"{math.ceil(count / 1024)} KB"
    return f"{count / (1024 * 1024):.1f} MB"
