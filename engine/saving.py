"""What a save decides before it writes: whether it changes anything, and what a revival keeps.

These rules sit above every backend (save() applies them, behind MemoryService's write
gate), so SQLite, files, PostgreSQL and remote stores all answer alike:

- a save whose type, description and body equal the live revision writes nothing (no history
  entry, no new revision for the next compare-and-swap writer to trip over) and says so;
- reviving a removed name keeps what the save leaves out from its last live revision, which
  its tombstone holds, as an update keeps it from the live one;
- an if_revision that a removed record cannot match says that it is removed, and how to
  revive it, instead of asking to reload a record no read can show; so does a read or a
  removal of a removed record (missing), instead of only "no record named"; and one that a
  name never written cannot match is refused before anything is written;
- the description and body rules (200 characters on one line, the body limit) are for what a
  save writes: an imported record's longer description or larger body, carried over as it
  is, never stops a save of a new body or type;
- a record the store holds but cannot read (UnreadableRecords) is replaced by a save that
  gives every field, as a new revision, its history kept; a save that leaves a field out
  would carry it over, and fails on it as a read does.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import SerializerFunctionWrapHandler, model_serializer

from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound, UnreadableRecords
from lazy_memory.engine.names import held_spelling, is_text, writable_name
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    authored_content,
)

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Clock, Storage

_MERGE_ATTEMPTS = 5


class SaveOutcome(StrEnum):
    """What a save did to its record."""

    CREATED = "created"
    UPDATED = "updated"
    REVIVED = "revived"
    """A removed record saved again, keeping what the save left out from before the removal."""
    REPLACED = "replaced"
    """A record the store held but could not read, replaced by a save giving every field."""
    UNCHANGED = "unchanged"
    """The live revision already held this content: nothing was written."""


class SavedRecord(Record):
    """A save's answer: the live record after it, and what the save did (outcome).

    On the wire it is the record with `outcome` added, and `"unchanged": true` when nothing
    was written (what clients read before outcome), so a client that knows neither field
    reads every answer as before.
    """

    outcome: SaveOutcome

    @property
    def unchanged(self) -> bool:
        """True when the live revision already held this content and nothing was written."""
        return self.outcome is SaveOutcome.UNCHANGED

    @model_serializer(mode="wrap")
    def _unchanged_only_when_true(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.unchanged:
            data["unchanged"] = True
        return data


def saved(record: Record, outcome: SaveOutcome) -> SavedRecord:
    """record as a save's answer."""
    return SavedRecord(**dict(record), outcome=outcome)


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


async def missing(storage: Storage, name: str, error: NotFound) -> NotFound:
    """error, the NotFound of a read or removal of name; or, when name is a removed record's,
    one that names the revision that removed it and says that a save revives it."""
    if not is_text(name):
        return error
    removal = await _removal(storage, await held_spelling(name, storage))
    if removal is None:
        return error
    return NotFound(
        f"no live record named {name!r}: it was removed at revision {removal.revision}; a save "
        "of that name revives it, keeping what the save leaves out from before the removal",
        removed_revision=removal.revision,
    )


async def save(
    storage: Storage,
    actor: Actor,
    clock: Clock,
    name: str,
    *,
    type: str | None,
    description: str | None,
    body: str | None,
    if_revision: int | None,
    max_body_bytes: int,
) -> SavedRecord:
    """Create, update or revive a record as actor, every authoring rule applied.

    On an update, a field left as None keeps its current value, and on a revival its
    value in the last live revision; the merge is itself a compare-and-swap on the
    revision it read, retried if another writer got in between, so a concurrent write is
    never silently overwritten with stale fields. A save that changes nothing writes
    nothing. The description and body rules apply to what the save writes: a description
    or body it carries over as the record holds it is not checked again (_authored). A name
    is the record the store holds by any spelling of it (equal after NFC), which keeps its
    own; a name the store held before the name rule stays writable by its exact name
    (engine/names.py, writable_name, which checks the name once and reads the record with
    it); an imported record keeps its provenance through later edits.
    """
    if type is not None and description is not None and body is not None:
        return await _replace(
            storage, actor, clock, name, type, description, body, if_revision, max_body_bytes
        )
    name, current = await writable_name(
        name, storage, lambda spelling: recall_live(storage, spelling)
    )
    for _ in range(_MERGE_ATTEMPTS):
        base = current or await _removal(storage, name)
        if base is None:
            if type is None or description is None:
                raise InvalidRecord(f"{name!r} is a new record: give it a type and a description")
            _check_new(name, base, if_revision)
            content = _authored(name, type, description, body or "", None, max_body_bytes)
            expected = if_revision
        else:
            content = _authored(
                name,
                type if type is not None else base.type,
                description if description is not None else base.description,
                body if body is not None else base.body,
                base,
                max_body_bytes,
            )
            expected = if_revision if if_revision is not None else base.revision
        try:
            return await _save_content(
                storage, actor, clock, content, current, expected, if_revision
            )
        except Conflict:
            if if_revision is not None:
                raise
        # Another writer moved the record after it was read: merge into what it wrote.
        current = await recall_live(storage, name)
    raise Conflict(f"{name!r} kept changing while it was being updated; try again")


async def _replace(
    storage: Storage,
    actor: Actor,
    clock: Clock,
    name: str,
    type: str,
    description: str,
    body: str,
    if_revision: int | None,
    max_body_bytes: int,
) -> SavedRecord:
    """save() of every field: nothing is merged, so nothing is retried."""
    name, found = await writable_name(
        name, storage, lambda spelling: _recall_replaced(storage, spelling)
    )
    unreadable = isinstance(found, UnreadableRecords)
    current = None if isinstance(found, UnreadableRecords) else found
    base: RecordContent | None = None if unreadable else current or await _removal(storage, name)
    _check_new(name, base, if_revision)
    content = _authored(name, type, description, body, base, max_body_bytes)
    return await _save_content(
        storage, actor, clock, content, current, if_revision, if_revision, unreadable=unreadable
    )


def _check_new(name: str, base: RecordContent | None, if_revision: int | None) -> None:
    """Refuse an if_revision that a name never written (base None) cannot match, before
    anything is written: the write would only find revision 0, and would start a store that
    does not exist yet for nothing."""
    if base is None and if_revision not in (None, 0):
        raise Conflict(
            f"{name!r} has never been written (revision 0), so if_revision {if_revision} cannot "
            "match: save with if_revision 0 (--if-revision 0) to create it only while it is "
            "new, or without one"
        )


async def recall_live(storage: Storage, name: str) -> Record | None:
    """The live record by exactly that name, in full, or None when there is none."""
    try:
        return await storage.recall_record(name)
    except NotFound:
        return None


async def _recall_replaced(storage: Storage, name: str) -> Record | UnreadableRecords | None:
    """What a save giving every field replaces by that exact name: the live record, or the
    error of one the store holds but cannot read (such a save is how it is repaired, as if
    new), or None."""
    try:
        return await recall_live(storage, name)
    except UnreadableRecords as error:
        return error


async def _removal(storage: Storage, name: str) -> HistoryEntry | None:
    """The tombstone of a removed name, holding its last live revision; else None."""
    return tombstone(await storage.history(name))


async def _save_content(
    storage: Storage,
    actor: Actor,
    clock: Clock,
    content: RecordContent,
    current: Record | None,
    expected: int | None,
    if_revision: int | None,
    *,
    unreadable: bool = False,
) -> SavedRecord:
    """Write content unless the live record (current) already holds it; if_revision is the
    caller's own, to say why it cannot match a removed record; unreadable: the save replaces
    a record the store could not read."""
    matches = current is not None and expected in (None, current.revision)
    if current is not None and matches and same_content(content, current):
        return saved(current, SaveOutcome.UNCHANGED)
    try:
        written = await storage.save_record(
            content, actor=actor, at=clock.now(), if_revision=expected
        )
    except Conflict:
        removal = None if if_revision is None else await _removal(storage, content.name)
        if removal is not None and if_revision is not None:
            raise removed_conflict(removal, if_revision) from None
        raise
    if current is not None:
        return saved(written, SaveOutcome.UPDATED)
    if unreadable:
        return saved(written, SaveOutcome.REPLACED)
    return saved(written, SaveOutcome.CREATED if written.revision == 1 else SaveOutcome.REVIVED)


def _authored(
    name: str,
    type: str,
    description: str,
    body: str,
    base: RecordContent | None,
    max_body_bytes: int,
) -> RecordContent:
    """The content a save writes over base (the live record, or the removed one's last live
    revision), with base's provenance: a description or body equal to base's is carried
    over, not written now (an import may have set it past the authoring rules), so only one
    that changes must obey them. name is writable_name's, checked there."""
    content = authored_content(
        name,
        type,
        description,
        body,
        max_body_bytes=None if base is not None and body == base.body else max_body_bytes,
        description_authored=base is None or description != base.description,
    )
    return _with_provenance(content, base)


def _with_provenance(content: RecordContent, current: RecordContent | None) -> RecordContent:
    """content carrying the provenance of the record it follows (live, or removed): where an
    imported record came from."""
    if current is None or current.provenance is None:
        return content
    return content.model_copy(update={"provenance": current.provenance})
