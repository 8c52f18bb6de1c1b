"""What a store must look like after a fault: whole, consistent, every acknowledged save in it.

The crash, disk and load tests all end the same way: open the store again, read its whole
history, and hold it against the saves whose acknowledgement reached the test.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import HistoryEntry, Operation


@dataclass(frozen=True)
class Acknowledged:
    """A save whose answer reached the test: the name, the revision it got, the body it wrote."""

    name: str
    revision: int
    body: str
    actor: str | None = None
    """The actor's detail the write must be attributed to, when the test knows it."""


def lost(acknowledged: Iterable[Acknowledged], history: list[HistoryEntry]) -> list[Acknowledged]:
    """The acknowledged saves the history does not hold exactly as they were acknowledged."""
    written = {(entry.name, entry.revision): entry for entry in history}
    missing = []
    for save in acknowledged:
        entry = written.get((save.name, save.revision))
        if (
            entry is None
            or entry.operation is not Operation.SAVE
            or entry.body != save.body
            or (save.actor is not None and entry.actor.detail != save.actor)
        ):
            missing.append(save)
    return missing


async def inconsistencies(storage: Storage, history: list[HistoryEntry]) -> list[str]:
    """Every way the store disagrees with itself; empty for a healthy store.

    Each name's revisions run 1, 2, 3... in history order with no gap or repeat, and the
    live records are exactly the names whose last entry is a save, at that entry's revision
    and with its content.
    """
    problems: list[str] = []
    by_name: dict[str, list[HistoryEntry]] = defaultdict(list)
    for entry in history:
        by_name[entry.name].append(entry)
    for name, entries in by_name.items():
        revisions = [entry.revision for entry in entries]
        if revisions != list(range(1, len(entries) + 1)):
            problems.append(f"{name}: revisions {revisions[:10]}... are not 1, 2, 3...")
    expected = {
        name: entries[-1]
        for name, entries in by_name.items()
        if entries[-1].operation is not Operation.REMOVE
    }
    live = {record.name: record for record in await storage.list_records()}
    if set(live) != set(expected):
        problems.append(
            f"live records {sorted(set(live) ^ set(expected))[:10]} disagree with the history"
        )
    for name in set(live) & set(expected):
        record, last = live[name], expected[name]
        if (record.revision, record.body, record.description) != (
            last.revision,
            last.body,
            last.description,
        ):
            problems.append(f"{name}: the live record is not its last history entry")
    if await storage.live_revisions() != {name: entry.revision for name, entry in expected.items()}:
        problems.append("live_revisions() disagrees with the history")
    return problems


def sqlite_integrity(database: Path) -> str:
    """SQLite's own verdict on the file: `ok`, or what `PRAGMA integrity_check` found."""
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute("PRAGMA integrity_check").fetchall()
    finally:
        connection.close()
    return "; ".join(str(row[0]) for row in rows)
