"""The record model: records, their history, who wrote them, and the rules a record obeys."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from lazy_memory.engine.constants import MAX_BODY_BYTES
from lazy_memory.engine.errors import InvalidRecord

# The kinds are plain enums in kinds.py, which the launch path reads without the models.
from lazy_memory.engine.kinds import ActorKind as ActorKind
from lazy_memory.engine.kinds import Operation as Operation
from lazy_memory.engine.kinds import RecordType as RecordType
from lazy_memory.engine.names import check_name

if TYPE_CHECKING:
    from lazy_memory.engine.index import UnreadableRecord

DESCRIPTION_MAX_LENGTH = 200
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")


class Actor(BaseModel):
    """The actor of a write (who wrote it): its kind and a detail such as a user name or a
    builder id."""

    model_config = ConfigDict(frozen=True)

    kind: ActorKind
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.detail}"


class Provenance(BaseModel):
    """Where an imported record came from: kept with it, verbatim as found."""

    model_config = ConfigDict(frozen=True)

    source: str
    session_id: str | None = None
    modified: str | None = None
    original_type: str | None = None
    original_name: str | None = None
    """The name the file gave, when it broke the name rule and the record got a derived one."""


class RecordContent(BaseModel):
    """What an actor writes: a record without its bookkeeping."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: RecordType
    description: str
    body: str
    provenance: Provenance | None = None


class Record(RecordContent):
    """A live record as the store holds it: content plus its latest revision and writer."""

    revision: int
    updated_at: datetime
    updated_by: Actor


class HistoryEntry(RecordContent):
    """One immutable write: the full record content after it, who made it, when and how."""

    revision: int
    operation: Operation
    actor: Actor
    at: datetime


class UnreadableRow(BaseModel):
    """A live record the store holds but cannot read, as JSON gives it (engine/index.py
    UnreadableRecord): `{"name": ..., "reason": ...}`."""

    model_config = ConfigDict(frozen=True)

    name: str
    reason: str

    @classmethod
    def of(cls, record: UnreadableRecord) -> UnreadableRow:
        """The row of an unreadable record."""
        return cls(name=record.name, reason=record.reason)


def is_unicode(text: str) -> bool:
    """Whether text can be stored: no lone surrogate, as an undecodable command-line byte or
    a JSON escape of half a pair gives; no record's name or content holds one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_type(value: str) -> RecordType:
    """Return the record type named by value, or raise InvalidRecord naming the four types."""
    try:
        return RecordType(value)
    except ValueError:
        known = ", ".join(member.value for member in RecordType)
        raise InvalidRecord(f"unknown type {value!r}: use one of {known}") from None


def check_description(description: str) -> str:
    """Return description if it is one non-empty line of at most 200 characters."""
    if not description.strip():
        raise InvalidRecord(
            f"the description is empty: give a one-line summary of at most "
            f"{DESCRIPTION_MAX_LENGTH} characters"
        )
    if _LINE_BREAKS.search(description):
        raise InvalidRecord("the description must be one line: put the detail in the body")
    if len(description) > DESCRIPTION_MAX_LENGTH:
        raise InvalidRecord(
            f"the description is {len(description)} characters; the limit is "
            f"{DESCRIPTION_MAX_LENGTH}: put the detail in the body"
        )
    return description


def _check_text(field: str, value: str) -> str:
    """Refuse text that cannot be stored as UTF-8 (lone surrogates from undecodable input)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord(f"the {field} is not valid UTF-8 text") from None
    return value


def authored_content(
    name: str,
    type: str,
    description: str,
    body: str,
    *,
    max_body_bytes: int | None = MAX_BODY_BYTES,
    description_authored: bool = True,
) -> RecordContent:
    """Validate a record written by a person or a builder: every rule of the store applies.

    name: as engine/names.py's writable_name gave it, which applied the name rule (with the
    store, which alone knows a name held from before the rule). max_body_bytes: the
    body's limit in UTF-8 bytes; None for a body the actor did not write (an update that
    keeps the current one, which an import may have brought in over the limit).
    description_authored: False for a description the actor did not write (one an update
    carries over as the record holds it, which an import may have brought in longer than
    200 characters or on several lines): the description rules are for what is written.
    """
    for field, value in (("description", description), ("body", body)):
        _check_text(field, value)
    # No character takes more than four bytes, so most bodies need no count at all.
    if max_body_bytes is not None and len(body) * 4 > max_body_bytes:
        size = len(body.encode("utf-8"))
        if size > max_body_bytes:
            raise InvalidRecord(
                f"the body is {size:,} bytes; the limit is {max_body_bytes:,} bytes (UTF-8): "
                "shorten it or split it into several records, or raise [memory] "
                "max_body_bytes in lazy.toml"
            )
    return RecordContent(
        name=name,
        type=parse_type(type),
        description=check_description(description) if description_authored else description,
        body=body,
    )


def imported_content(
    name: str,
    type: RecordType,
    description: str,
    body: str,
    provenance: Provenance | None = None,
) -> RecordContent:
    """Validate a record found in harness memory files: kept verbatim, whatever its length.

    The name obeys the name rule like any other (the planner derives one if it does not).
    """
    for field, value in (("name", name), ("description", description), ("body", body)):
        _check_text(field, value)
    return RecordContent(
        name=check_name(name), type=type, description=description, body=body, provenance=provenance
    )


def history_entry(
    content: RecordContent, *, revision: int, operation: Operation, actor: Actor, at: datetime
) -> HistoryEntry:
    """The history entry of writing content (a live record's, for a tombstone) as revision."""
    return HistoryEntry(
        name=content.name,
        type=content.type,
        description=content.description,
        body=content.body,
        provenance=content.provenance,
        revision=revision,
        operation=operation,
        actor=actor,
        at=at,
    )


def saved_record(content: RecordContent, *, revision: int, actor: Actor, at: datetime) -> Record:
    """The live record that writing content as revision leaves behind."""
    return Record(
        name=content.name,
        type=content.type,
        description=content.description,
        body=content.body,
        provenance=content.provenance,
        revision=revision,
        updated_at=at,
        updated_by=actor,
    )


def record_after(entry: HistoryEntry) -> Record:
    """The live record a save or import entry leaves behind."""
    return saved_record(entry, revision=entry.revision, actor=entry.actor, at=entry.at)
