"""What a stored row must hold to be read, checked field by field without the record models.

This version writes every row through the models, but a store is shared: another tool, an
older or newer version, or a hand may leave a row in a form this version does not read (a
type that is not one of the four, a revision or a time that does not parse, text that is
not valid UTF-8). Each backend checks the rows it reads here, reads the rest, and names the
ones that fail, with why (engine/index.py UnreadableRecord, engine/errors.py
UnreadableRecords). The launch hook checks its index rows here too, so nothing here imports
pydantic.

Text that is not valid UTF-8 reaches these checks as NotText: a SQL backend reads a row
that holds some again with lenient_text as its decoder, which gives it its bytes instead of
failing the whole read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.kinds import RECORD_TYPES, ActorKind, Operation

TYPES = ", ".join(RECORD_TYPES)
ACTOR_KINDS = {member.value for member in ActorKind}
OPERATIONS = {member.value for member in Operation}
_SHOWN_VALUE = 40
"""The characters of a stored value a reason quotes before it cuts it."""

Parse = Callable[[Any], datetime]
"""How a backend reads a stored time: an ISO text (SQLite), or the driver's datetime as is."""


class NotText(bytes):
    """Stored text that is not valid UTF-8, as its bytes: what lenient_text gives for it."""


def lenient_text(data: bytes) -> str | NotText:
    """Stored text as a str, or NotText when it is not valid UTF-8 (never an exception)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return NotText(data)


def unreadable(name: object, reason: str) -> UnreadableRecord:
    """The unreadable record called name (bytes that are not UTF-8 shown as `\\xNN`)."""
    return UnreadableRecord(as_text(name), reason)


def index_entries(
    rows: Iterable[Any],
    parse: Parse,
    failed: list[UnreadableRecord],
    *,
    text: Callable[[str], str] | None = None,
) -> list[IndexEntry]:
    """The index entries of rows of (name, type, description, revision, time), each checked;
    a row that fails is added to failed, with why, and left out. text turns stored text into
    what was written, when they differ (postgres/text.py loaded)."""
    entries: list[IndexEntry] = []
    types = RECORD_TYPES
    for name, type_, description, revision, at in rows:
        try:
            if type(name) is str and type(description) is str and type(revision) is int:
                time = parse(at)
                if revision > 0 and time.tzinfo is not None:
                    if text is None:
                        entries.append(IndexEntry(name, types[type_], description, revision, time))
                    else:
                        entry = IndexEntry(
                            text(name), types[type_], text(description), revision, time
                        )
                        entries.append(entry)
                    continue
        except (KeyError, TypeError, ValueError):
            pass
        problem = index_problem(name, type_, description, revision, at, parse)
        failed.append(unreadable(name, problem or "it cannot be read"))
    return entries


def index_problem(
    name: object,
    type_: object,
    description: object,
    revision: object,
    at: object,
    parse: Parse,
) -> str | None:
    """Why a row of (name, type, description, revision, time) cannot be read, or None."""
    return (
        text_problem("name", name)
        or type_problem(type_)
        or text_problem("description", description)
        or revision_problem(revision)
        or time_problem(at, parse)
    )


def search_problem(
    name: object,
    type_: object,
    description: object,
    body: object,
    revision: object,
    at: object,
    parse: Parse,
) -> str | None:
    """Why a search's row (its index columns, and the body or a snippet of it) cannot be read,
    or None: a record the index leaves out, search leaves out too."""
    return index_problem(name, type_, description, revision, at, parse) or text_problem(
        "body", body
    )


def text_problem(field: str, value: object) -> str | None:
    """Why a text field cannot be read, or None."""
    if isinstance(value, NotText):
        return f"its {field} is not valid UTF-8 text"
    if type(value) is not str:
        return f"its {field} is not text ({type(value).__name__})"
    return None


def type_problem(value: object) -> str | None:
    """Why a type cannot be read (it is not one of the four), or None."""
    if type(value) is str and value in RECORD_TYPES:
        return None
    return f"its type {_shown(value)} is not one of {TYPES}"


def revision_problem(value: object) -> str | None:
    """Why a revision cannot be read (it is not a whole number from 1), or None."""
    if type(value) is int and value > 0:
        return None
    return f"its revision {_shown(value)} is not a whole number from 1 up"


def time_problem(value: object, parse: Parse) -> str | None:
    """Why a time cannot be read (it is not a date and time with its offset from UTC), or None."""
    try:
        if parse(value).tzinfo is not None:
            return None
    except (AttributeError, TypeError, ValueError):
        pass
    return f"its time {_shown(value)} is not a date and time with its offset from UTC"


def choice_problem(field: str, value: object, choices: set[str]) -> str | None:
    """Why a field holding one of a few words (an actor's kind, an operation) cannot be read."""
    if type(value) is str and value in choices:
        return None
    return f"its {field} {_shown(value)} is not one of {', '.join(sorted(choices))}"


def as_text(value: object) -> str:
    """A stored name as text: bytes that are not UTF-8 shown as `\\xNN`."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value if isinstance(value, str) else repr(value)


def _shown(value: object) -> str:
    text = repr(as_text(value)) if isinstance(value, bytes) else repr(value)
    return text if len(text) <= _SHOWN_VALUE else text[:_SHOWN_VALUE] + "…"
