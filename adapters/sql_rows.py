"""The SQL backends' rows of records and history, mapped to the engine's types in one place.

SQLite and PostgreSQL keep the same columns (sqlite_schema.py, postgres_schema.py) and select
them in the same order (RECORD_COLUMNS, HISTORY_COLUMNS). They differ only in how a time comes
back (SQLite: ISO text; PostgreSQL: a datetime) and in how text is kept (PostgreSQL's text
cannot hold NUL, so postgres_text.py escapes it): a Dialect says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lazy_memory.engine.kinds import RECORD_TYPES
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Provenance,
    Record,
)

RECORD_COLUMNS = (
    "name, type, description, body, revision, updated_at, actor_kind, actor_detail, provenance"
)
HISTORY_COLUMNS = (
    "name, type, description, body, revision, operation, at, actor_kind, actor_detail, provenance"
)


@dataclass(frozen=True)
class Dialect:
    """How one backend gives its stored text and times back."""

    text: Callable[[str], str] | None
    """The text that was written, from what is stored; None when they are the same."""
    time: Callable[[Any], datetime] | None
    """A stored time as a datetime; None when the driver gives datetimes already."""


def record_from_row(row: Iterable[Any], dialect: Dialect) -> Record:
    """The record a row of RECORD_COLUMNS holds."""
    name, type_, description, body, revision, updated_at, kind, detail, origin = row
    text, time = dialect.text, dialect.time
    if text is not None:
        name, description, body, detail = text(name), text(description), text(body), text(detail)
    return Record(
        name=name,
        type=RECORD_TYPES[type_],
        description=description,
        body=body,
        provenance=provenance_from(origin),
        revision=revision,
        updated_at=updated_at if time is None else time(updated_at),
        updated_by=Actor(kind=ActorKind(kind), detail=detail),
    )


def history_from_row(row: Iterable[Any], dialect: Dialect) -> HistoryEntry:
    """The history entry a row of HISTORY_COLUMNS holds."""
    name, type_, description, body, revision, operation, at, kind, detail, origin = row
    text, time = dialect.text, dialect.time
    if text is not None:
        name, description, body, detail = text(name), text(description), text(body), text(detail)
    return HistoryEntry(
        name=name,
        type=RECORD_TYPES[type_],
        description=description,
        body=body,
        provenance=provenance_from(origin),
        revision=revision,
        operation=Operation(operation),
        at=at if time is None else time(at),
        actor=Actor(kind=ActorKind(kind), detail=detail),
    )


def provenance_from(stored: str | None) -> Provenance | None:
    """The provenance a column holds as JSON, if any."""
    return None if stored is None else Provenance.model_validate_json(stored)
