"""What a save decides before it writes: whether it changes anything, and what a revival keeps.

These rules sit above every backend (MemoryService.save applies them), so SQLite, files,
PostgreSQL and remote stores all answer alike:

- a save whose type, description and body equal the live revision writes nothing (no history
  entry, no new revision for the next compare-and-swap writer to trip over) and says so;
- reviving a removed name keeps what the save leaves out from its last live revision, which
  its tombstone holds, as an update keeps it from the live one;
- an if_revision that a removed record cannot match says that it is removed, and how to
  revive it, instead of asking to reload a record no read can show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import SerializerFunctionWrapHandler, model_serializer

from lazy_memory.engine.errors import Conflict
from lazy_memory.engine.records import HistoryEntry, Operation, Record, RecordContent


class SavedRecord(Record):
    """A save's answer: the live record after it, and whether the save found it so already.

    On the wire it is the record, with `"unchanged": true` added only when nothing was
    written, so a client that knows no such field reads every answer as before.
    """

    unchanged: bool = False
    """True when the live revision already held this content and nothing was written."""

    @model_serializer(mode="wrap")
    def _unchanged_only_when_true(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.unchanged:
            data.pop("unchanged", None)
        return data


def saved(record: Record, *, unchanged: bool = False) -> SavedRecord:
    """record as a save's answer."""
    return SavedRecord(**dict(record), unchanged=unchanged)


def same_content(content: RecordContent, live: Record | None) -> bool:
    """Whether writing content would leave the live record's type, description and body as
    they are: such a save is no change."""
    return live is not None and (content.type, content.description, content.body) == (
        live.type,
        live.description,
        live.body,
    )


def tombstone(entries: Sequence[HistoryEntry]) -> HistoryEntry | None:
    """The removal a name's history ends with (the content of its last live revision), or
    None when the name is live or was never written."""
    if entries and entries[-1].operation is Operation.REMOVE:
        return entries[-1]
    return None


def removed_conflict(removal: HistoryEntry, if_revision: int) -> Conflict:
    """The Conflict of an if_revision that the removed record's revision does not match."""
    revision = removal.revision
    return Conflict(
        f"{removal.name!r} is removed (revision {revision} removed it), so if_revision "
        f"{if_revision} cannot match: to revive it, save with if_revision {revision} "
        f"(--if-revision {revision}) or without one"
    )
