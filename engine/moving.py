"""Moving a store: its whole history, its tombstones and its compact, into another backend.

Replaying a store's history in order into an empty store reproduces it exactly: each save
or import becomes the revision after the one before it (a compare-and-swap, so a writer
racing the copy makes it fail instead of interleaving), each removal tombstones the record
it removed, and both keep the entry's actor, time, operation and provenance. A target that
already holds the start of the same history continues after it, so a re-run, or a copy cut
short, resumes; a target holding any other history is refused before anything is written.

The one exception to "exactly": a name that breaks the name rule (engine/names.py; an older
import could store one) enters the target as its derived name in every entry, the original
kept in the entry's provenance, and the report lists each. So does a second spelling of one
name (equal after NFC to a name written before it, which an older store could take): the
target holds one record per name, as every store now does. The mapping depends on the
source's history alone, so a re-run compares and resumes the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from enum import StrEnum

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, NotFound
from lazy_memory.engine.names import derived_name, name_key, name_problem
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import HistoryEntry, Operation, Provenance, RecordContent
from lazy_memory.engine.visible import shown_name
from lazy_memory.engine.wording import agreeing, counted

RENAMED_SOURCE = "lazy memory migrate"
"""The provenance source of a record renamed by a move that had no provenance of its own."""


class CompactMove(StrEnum):
    """What moving did to the target's compact slot."""

    NONE = "none"
    """Neither store has a compact."""
    UNCHANGED = "unchanged"
    """The target already holds the source's compact."""
    COPIED = "copied"
    """The source's compact was written to the target."""
    CLEARED = "cleared"
    """The source has no compact, so the target's was cleared."""


class MoveReport(BaseModel):
    """What moving a store did, or, for a dry run, would do."""

    entries: int
    """History entries in the source."""
    already_present: int
    """Of them, those the target held already."""
    copied: int
    """Of them, those written to the target (a dry run: to be written)."""
    compact: CompactMove
    dry_run: bool
    renamed: dict[str, str] = {}
    """Each source name that breaks the name rule or is a second spelling of a name, and the
    derived name it has in the target."""


async def move_store(
    source: Storage,
    target: Storage,
    *,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> MoveReport:
    """Copy source's history, tombstones and compact into target; Conflict if they diverge.

    progress is told (done, total) after each entry written.
    """
    history = await source.history()
    renamed = _renamed(history)
    if renamed:
        history = [_with_name(entry, renamed) for entry in history]
    present = await target.history()
    _check_continues(history, present)
    missing = history[len(present) :]
    compact = await source.get_compact()
    compact_move = _compact_move(compact, await target.get_compact())
    if not dry_run:
        for done, entry in enumerate(missing, start=1):
            await _replay(target, entry, position=len(present) + done)
            if progress is not None:
                progress(done, len(missing))
        if compact_move is CompactMove.COPIED and compact is not None:
            await target.put_compact(compact)
        elif compact_move is CompactMove.CLEARED:
            await target.clear_compact()
    return MoveReport(
        entries=len(history),
        already_present=len(present),
        copied=len(missing),
        compact=compact_move,
        dry_run=dry_run,
        renamed=renamed,
    )


def _renamed(history: Sequence[HistoryEntry]) -> dict[str, str]:
    """Each name in history that breaks the name rule, or is a later spelling of a name
    written before it, and the name the target gives it."""
    names = {entry.name for entry in history}
    renamed = {name: derived_name(name) for name in sorted(names) if name_problem(name)}
    first_spelling: dict[str, str] = {}
    for entry in history:
        if entry.name not in renamed:
            spelling = first_spelling.setdefault(name_key(entry.name), entry.name)
            if spelling != entry.name:
                renamed[entry.name] = derived_name(entry.name)
    # Eight hex digits of a hash make a clash all but impossible; one made on purpose must
    # still not merge two records' histories.
    keys = {name_key(name) for name in names}
    taken = Counter(name_key(new) for new in renamed.values())
    clashes = [
        name for name, new in renamed.items() if name_key(new) in keys or taken[name_key(new)] > 1
    ]
    if clashes:
        raise Conflict(
            f"the store holds {counted(len(clashes), 'name')} that "
            f"{agreeing(len(clashes), 'breaks', 'break')} the name rule and whose derived name "
            f"is taken, the first {shown_name(clashes[0])}; nothing was written"
        )
    return renamed


def _with_name(entry: HistoryEntry, renamed: dict[str, str]) -> HistoryEntry:
    """entry under its name in the target, the original in its provenance when renamed."""
    name = renamed.get(entry.name)
    if name is None:
        return entry
    if entry.provenance is None:
        provenance = Provenance(source=RENAMED_SOURCE, original_name=entry.name)
    else:
        provenance = entry.provenance.model_copy(update={"original_name": entry.name})
    return entry.model_copy(update={"name": name, "provenance": provenance})


def _check_continues(history: Sequence[HistoryEntry], present: Sequence[HistoryEntry]) -> None:
    """Refuse a target whose history is not the start of the source's."""
    for position, (ours, theirs) in enumerate(zip(history, present, strict=False), start=1):
        if ours != theirs:
            raise Conflict(
                f"the target already holds a different history: its entry {position} is "
                f"{_described(theirs)}, the source's is {_described(ours)}; nothing was "
                "written (move into an empty store, or one this store was moved to before)"
            )
    if len(present) > len(history):
        raise Conflict(
            f"the target already holds a longer history than the source "
            f"({counted(len(present), 'entry', 'entries')}, not {len(history)}); nothing was "
            "written"
        )


def _compact_move(compact: Compact | None, current: Compact | None) -> CompactMove:
    if compact == current:
        return CompactMove.NONE if compact is None else CompactMove.UNCHANGED
    return CompactMove.CLEARED if compact is None else CompactMove.COPIED


async def _replay(target: Storage, entry: HistoryEntry, *, position: int) -> None:
    """Write entry into target as the very same entry, or raise Conflict."""
    try:
        if entry.operation is Operation.REMOVE:
            replayed = entry == await target.remove_record(
                entry.name, actor=entry.actor, at=entry.at
            )
        else:
            content = RecordContent.model_validate(
                entry.model_dump(include=set(RecordContent.model_fields))
            )
            await target.save_record(
                content,
                actor=entry.actor,
                at=entry.at,
                operation=entry.operation,
                if_revision=entry.revision - 1,
            )
            replayed = True
    except (Conflict, NotFound):
        replayed = False
    if not replayed:
        raise Conflict(
            f"the target changed while the store was being moved: it could not take entry "
            f"{position}, {_described(entry)}, as the source has it; run the move again to "
            "see where the two stores stand"
        )


def _described(entry: HistoryEntry) -> str:
    return (
        f"{entry.name!r} revision {entry.revision} ({entry.operation.value} by {entry.actor} "
        f"at {entry.at.isoformat()})"
    )
