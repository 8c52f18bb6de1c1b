"""The files backend's index: every name's latest history entry, and where its line is.

Each process keeps the index in memory and brings it up to date from the files before every
operation (two `stat` calls when nothing changed). Bodies stay on disk: a record is read from
its line when asked for. Nothing here imports the record models: the launch hook reads the
index too (files/entries.py).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from lazy_memory.adapters.files.entries import Written
from lazy_memory.adapters.files.layout import FileKey
from lazy_memory.adapters.files.lines import BadLine
from lazy_memory.adapters.row_checks import as_text
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.kinds import Operation, RecordType

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Change
    from lazy_memory.engine.records import HistoryEntry

CHECKPOINT_MIN_ENTRIES = 100
"""Lines after the checkpoint that opening may always replay: fewer never warrant a new one."""
CHECKPOINT_FRACTION = 8
"""A new checkpoint once the lines after the last outnumber its names divided by this."""


class Slot(NamedTuple):
    """A name's latest history entry as the index holds it: what an index line shows of it,
    whether it removed the record, and where its line is in the history."""

    type: RecordType
    description: str
    revision: int
    removed: bool
    offset: int
    length: int


class Index:
    """Every name's latest history entry, as of the first `offset` bytes of one history file.

    A plain class (not a dataclass, whose module the launch hook would pay for on every start).
    """

    def __init__(self) -> None:
        self.history_file: tuple[int, int] | None = None
        """The (device, inode) of the history file the offsets point into; None before one
        exists."""
        self.checkpoint_key: FileKey | None = None
        """The memories.json this index started from, to notice another one replacing it."""
        self.checkpoint_entries = 0
        self.entries = 0
        self.offset = 0
        self.slots: dict[str, Slot] = {}
        self.times: dict[str, datetime] = {}
        """When each name's latest entry was written: the index's time of a live record."""
        self.live: list[str] = []
        """The names of live records whose latest entry reads, sorted."""
        self.unreadable: dict[str, str] = {}
        """The names whose latest entry does not read (files/lines.py BadLine), and why: live
        records the store cannot read, in no list of live names."""
        self.generation = 0
        """Grows with every entry applied, so caches built from the index know when it moved."""

    def apply(self, entry: Written | HistoryEntry, offset: int, length: int) -> None:
        """Take in the entry whose line starts at offset (the index's own end)."""
        removed = entry.operation is Operation.REMOVE
        was_live = self._was_live(entry.name)
        self.slots[entry.name] = Slot(
            entry.type, entry.description, entry.revision, removed, offset, length
        )
        self.times[entry.name] = entry.at
        if was_live and removed:
            del self.live[bisect.bisect_left(self.live, entry.name)]
        elif not was_live and not removed:
            bisect.insort(self.live, entry.name)
        self._advance(offset, length)

    def apply_unreadable(self, bad: BadLine, offset: int, length: int) -> None:
        """Take in a line that does not read but names its record: the record is live and
        cannot be read, and its next save takes the revision after the line's (or after its
        last readable one's, when the line gives none that reads)."""
        name = as_text(bad.name)
        if self._was_live(name):
            del self.live[bisect.bisect_left(self.live, name)]
        previous = self.slots.get(name)
        revision = bad.revision or (1 if previous is None else previous.revision + 1)
        kind, description = (RecordType.PROJECT, "") if previous is None else previous[:2]
        self.slots[name] = Slot(kind, description, revision, False, offset, length)
        self.unreadable[name] = bad.reason
        self._advance(offset, length)

    def _was_live(self, name: str) -> bool:
        """Whether name is a live record that reads (in live): a name taken in as unreadable
        is not, and is no longer so once its next line is."""
        if self.unreadable.pop(name, None) is not None:
            return False
        previous = self.slots.get(name)
        return previous is not None and not previous.removed

    def _advance(self, offset: int, length: int) -> None:
        self.entries += 1
        self.offset = offset + length
        self.generation += 1

    def skip(self, length: int) -> None:
        """Step over a blank line (a hand-edited history may hold one)."""
        self.offset += length

    def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now, in name order."""
        slots = self.slots
        return sorted(name for name in watermark if name in slots and slots[name].removed)

    def due_for_checkpoint(self) -> bool:
        """True once replaying the lines after the checkpoint costs more than rewriting it.

        Never while a name's latest line does not read: a checkpoint has no row for such a
        name, so the lines after the last one are replayed until the record is saved again.
        """
        if self.unreadable:
            return False
        behind = self.entries - self.checkpoint_entries
        return behind > max(CHECKPOINT_MIN_ENTRIES, len(self.slots) // CHECKPOINT_FRACTION)


INDEX_BATCH = 1_000
"""Index entries handed to a fold at a time."""


def index_batches(index: Index) -> Iterator[list[IndexEntry]]:
    """The live index's entries, ordered by name, INDEX_BATCH at a time."""
    slots, times, live = index.slots, index.times, index.live
    for start in range(0, len(live), INDEX_BATCH):
        batch = []
        for name in live[start : start + INDEX_BATCH]:
            slot = slots[name]
            batch.append(IndexEntry(name, slot.type, slot.description, slot.revision, times[name]))
        yield batch


def changes_between(before: dict[str, Slot], after: dict[str, Slot]) -> list[Change]:
    """What leads from one index to the next, by name: for an index read afresh."""
    from lazy_memory.engine.ports import Change

    return [
        Change(
            name=name,
            revision=slot.revision,
            operation=Operation.REMOVE if slot.removed else Operation.SAVE,
        )
        for name, slot in sorted(after.items())
        if name not in before or before[name].revision != slot.revision
    ]


def unreadable_records(index: Index) -> list[UnreadableRecord]:
    """The live records whose latest line does not read, and why, in name order."""
    return [UnreadableRecord(name, reason) for name, reason in sorted(index.unreadable.items())]
