"""What a store holds right now, to compare before and after a refused write."""

from __future__ import annotations

from dataclasses import dataclass

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import HistoryEntry, Record


@dataclass(frozen=True)
class Snapshot:
    """Everything a store holds: live records, the whole history, and the compact slot."""

    records: list[Record]
    history: list[HistoryEntry]
    compact: Compact | None


async def snapshot(storage: Storage) -> Snapshot:
    """What storage holds now."""
    return Snapshot(
        records=await storage.list_records(),
        history=await storage.history(),
        compact=await storage.get_compact(),
    )
