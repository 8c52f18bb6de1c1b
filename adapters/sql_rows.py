"""The SQL backends' rows of records and history, mapped to the engine's types in one place.

SQLite and PostgreSQL keep the same columns (sqlite/schema.py, postgres/schema.py) and select
them in the same order (RECORD_COLUMNS, HISTORY_COLUMNS). They differ only in how a time comes
back (SQLite: ISO text; PostgreSQL: a datetime) and in how text is kept (PostgreSQL's text
cannot hold NUL, so postgres/text.py escapes it): a Dialect says which.

Every row is checked before it is mapped (row_checks.py): one that does not read (a type that
is not one of the four, a revision or a time that does not parse, text that is not valid
UTF-8, a provenance that is not JSON this version reads) is named with why, and the others
are read all the same (UnreadableRecords, raised by read_rows once they are).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import ValidationError

from lazy_memory.adapters.row_checks import (
    ACTOR_KINDS,
    OPERATIONS,
    Parse,
    choice_problem,
    search_problem,
    text_problem,
    unreadable,
)
from lazy_memory.engine.errors import UnreadableRecords
from lazy_memory.engine.index import UnreadableRecord
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
_T = TypeVar("_T")


@dataclass(frozen=True)
class Dialect:
    """How one backend gives its stored text and times back."""

    text: Callable[[str], str] | None
    """The text that was written, from what is stored; None when they are the same."""
    time: Callable[[Any], datetime] | None
    """A stored time as a datetime; None when the driver gives datetimes already."""

    @property
    def parse(self) -> Parse:
        """How a stored time reads as a datetime."""
        return self.time or _as_given


def read_rows(
    rows: Iterable[Any], read: Callable[[Any], _T | UnreadableRecord], where: str
) -> list[_T]:
    """What read makes of each row; UnreadableRecords, with the others, if some do not read.

    where names the store for the error's message (`the SQLite store at PATH`).
    """
    read_ones: list[_T] = []
    failed: dict[str, UnreadableRecord] = {}
    for row in rows:
        result = read(row)
        if not isinstance(result, UnreadableRecord):
            read_ones.append(result)
        elif result.name not in failed:  # a record's history may hold several such rows
            failed[result.name] = result
    if failed:
        raise UnreadableRecords.found(where, list(failed.values()), read_ones)
    return read_ones


def read_row(row: Any, read: Callable[[Any], _T | UnreadableRecord], where: str) -> _T:
    """What read makes of one row, or UnreadableRecords naming it and why."""
    return read_rows([row], read, where)[0]


def record_from_row(row: Any, dialect: Dialect) -> Record | UnreadableRecord:
    """The record a row of RECORD_COLUMNS holds, or why it cannot be read."""
    failed = record_problem(row, dialect)
    if failed is not None:
        return failed
    name, type_, description, body, revision, updated_at, kind, detail, origin = row
    text = dialect.text
    if text is not None:
        name, description, body, detail = text(name), text(description), text(body), text(detail)
    return Record(
        name=name,
        type=RECORD_TYPES[type_],
        description=description,
        body=body,
        provenance=provenance_from(origin),
        revision=revision,
        updated_at=dialect.parse(updated_at),
        updated_by=Actor(kind=ActorKind(kind), detail=detail),
    )


def record_problem(row: Any, dialect: Dialect) -> UnreadableRecord | None:
    """Why a row of RECORD_COLUMNS cannot be read, if it cannot: record_from_row's checks,
    without building the record (a whole store's check reads every row)."""
    name, type_, description, body, revision, updated_at, kind, detail, origin = row
    problem = _problem(dialect, name, type_, description, body, revision, updated_at, kind, detail)
    provenance = _provenance(origin) if problem is None else None
    problem = problem or (provenance if isinstance(provenance, str) else None)
    return None if problem is None else unreadable(name, problem)


def history_from_row(row: Any, dialect: Dialect) -> HistoryEntry | UnreadableRecord:
    """The history entry a row of HISTORY_COLUMNS holds, or why it cannot be read."""
    name, type_, description, body, revision, operation, at, kind, detail, origin = row
    problem = _problem(
        dialect, name, type_, description, body, revision, at, kind, detail
    ) or choice_problem("operation", operation, OPERATIONS)
    provenance = _provenance(origin)
    if isinstance(provenance, str):
        problem = problem or provenance
    if problem is not None or isinstance(provenance, str):
        return unreadable(name, f"revision {revision!r} in its history: {problem}")
    text = dialect.text
    if text is not None:
        name, description, body, detail = text(name), text(description), text(body), text(detail)
    return HistoryEntry(
        name=name,
        type=RECORD_TYPES[type_],
        description=description,
        body=body,
        provenance=provenance,
        revision=revision,
        operation=Operation(operation),
        at=dialect.parse(at),
        actor=Actor(kind=ActorKind(kind), detail=detail),
    )


def provenance_from(stored: str | None) -> Provenance | None:
    """The provenance a column holds as JSON, if any."""
    return None if stored is None else Provenance.model_validate_json(stored)


def _problem(
    dialect: Dialect,
    name: object,
    type_: object,
    description: object,
    body: object,
    revision: object,
    at: object,
    kind: object,
    detail: object,
) -> str | None:
    """Why a row's columns cannot be read: its index columns and body first, as the index
    and search check theirs, so each says the same of it."""
    return (
        search_problem(name, type_, description, body, revision, at, dialect.parse)
        or choice_problem("actor's kind", kind, ACTOR_KINDS)
        or text_problem("actor", detail)
    )


def _provenance(stored: Any) -> Provenance | str | None:
    """The provenance a column holds, or why it does not read."""
    try:
        return provenance_from(stored)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"its provenance{' ' + where if where else ''} does not read: {first['msg']}"


def _as_given(at: Any) -> datetime:
    """A time the driver gives as a datetime already."""
    if not isinstance(at, datetime):
        raise TypeError(f"{at!r} is not a datetime")
    return at
