"""The files backend's history lines: read from the file in few reads, each read as an entry
or named as one that does not read.

The journal (files/journal.py) keeps the file and its index; what it reads is cut into lines
and judged here. The lines the index points at are read in runs of consecutive ones, up to
READ_CHUNK bytes a read, so a search that reads many records costs few system calls.

The backend writes each line through the models, but the file is plain text that another
tool, another version or a hand may write: a line can hold a type that is not one of the
four, a field of the wrong kind, text that is not UTF-8, or no JSON at all. A line that
still names its record (a JSON object with a `name`) is a BadLine: that record cannot be
read, and the rest of the store can (files/index.py keeps it as its name's latest entry, so
the name's next save still takes the next revision). A line that names no record could be
any record's latest entry, so nothing in the store can be vouched for: the store is then
corrupt (vouched_for), as it always was.

The checks that need no model come first (row_checks.py), so the launch hook names a line
with a bad type without importing pydantic; the model judges what they let through, as it
always has, and its verdict is what reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from lazy_memory.adapters.files.entries import Written, written
from lazy_memory.adapters.files.layout import corrupt
from lazy_memory.adapters.row_checks import (
    ACTOR_KINDS,
    OPERATIONS,
    NotText,
    choice_problem,
    revision_problem,
    text_problem,
    time_problem,
    type_problem,
)
from lazy_memory.engine.constants import HISTORY_FILE

if TYPE_CHECKING:
    from lazy_memory.adapters.files.index import Slot
    from lazy_memory.engine.records import HistoryEntry

READ_CHUNK = 1 << 22
"""The most bytes one read of consecutive history lines takes at a time."""


class BadLine(NamedTuple):
    """A history line that does not read as an entry, and the record it names, if any."""

    name: str | NotText | None
    """The record the line names; None when it names none (the store is then corrupt)."""
    revision: int | None
    """The revision the line gives, if it gives one that reads."""
    reason: str


_E = TypeVar("_E", bound="Written | HistoryEntry | BadLine")


def lines_at(slots: Sequence[Slot], pread: Callable[[int, int], bytes]) -> list[bytes]:
    """The history lines the slots point at, in the same order, read with pread(size, offset)
    in one call for each run of consecutive lines (up to READ_CHUNK bytes)."""
    order = sorted(range(len(slots)), key=lambda number: slots[number].offset)
    lines: list[bytes] = [b""] * len(slots)
    start = 0
    while start < len(order):
        end = start + 1
        first = slots[order[start]]
        stop = first.offset + first.length
        while end < len(order):
            following = slots[order[end]]
            if following.offset != stop or stop - first.offset >= READ_CHUNK:
                break
            stop += following.length
            end += 1
        chunk = pread(stop - first.offset, first.offset)
        for number in order[start:end]:
            begin = slots[number].offset - first.offset
            lines[number] = chunk[begin : begin + slots[number].length]
        start = end
    return lines


def split_lines(whole: bytes) -> list[bytes]:
    """The lines of whole lines of text, each with its newline."""
    return [line + b"\n" for line in whole.split(b"\n")[:-1]]


def whole_entry(line: bytes, offset: int, history: Path) -> HistoryEntry | BadLine:
    """The whole entry the line at offset of history holds, read by its model, or the BadLine
    it is; a line cut short makes the store corrupt."""
    if not line.endswith(b"\n"):
        raise corrupt(history, f"the entry at byte {offset} of {HISTORY_FILE} is cut short")
    return vouched_for(entry(line), offset, history)


def vouched_for(read: _E, offset: int, history: Path) -> _E:
    """read, unless it is a line that names no record: no record can be vouched for then (it
    may be any one's latest entry), so the store is corrupt."""
    if isinstance(read, BadLine) and read.name is None:
        raise corrupt(history, f"the entry at byte {offset}: {read.reason}")
    return read


def indexed(line: bytes) -> Written | HistoryEntry | BadLine:
    """What the index keeps of a whole line: in the form the backend writes it, read without
    the models; else checked, and read by the model only if the checks find nothing wrong."""
    return written(line) or _checked(line) or entry(line)


def entry(line: bytes) -> HistoryEntry | BadLine:
    """The whole entry a line holds, read by its model; or the BadLine it is."""
    from pydantic import ValidationError

    from lazy_memory.adapters.files.layout import validation_reason
    from lazy_memory.engine.records import HistoryEntry

    try:
        return HistoryEntry.model_validate_json(line)
    except ValidationError as error:
        bad = _checked(line, strict=True)
        return bad if bad is not None else _named(_fields(line), validation_reason(error))


def _checked(line: bytes, *, strict: bool = False) -> BadLine | None:
    """The BadLine a line is by the checks that need no model; None if they find nothing.

    A revision is checked only as a number (the model also reads "3"), a time only as text
    (it also reads a number of seconds); strict checks each as a line the model refused.
    """
    fields = _fields(line)
    if fields is None:
        return BadLine(None, None, "it is not a JSON object")
    actor = fields.get("actor")
    actor = actor if type(actor) is dict else {}
    problem = (
        text_problem("name", fields.get("name"))
        or type_problem(fields.get("type"))
        or text_problem("description", fields.get("description"))
        or text_problem("body", fields.get("body"))
        or choice_problem("operation", fields.get("operation"), OPERATIONS)
        or choice_problem("actor's kind", actor.get("kind"), ACTOR_KINDS)
        or text_problem("actor", actor.get("detail"))
    )
    revision, at = fields.get("revision"), fields.get("at")
    if problem is None and (strict or (type(revision) is int and revision < 1)):
        problem = revision_problem(revision)
    if problem is None and (strict or isinstance(at, str)):
        problem = time_problem(at, datetime.fromisoformat)
    return None if problem is None else _named(fields, problem)


def _named(fields: dict[str, Any] | None, reason: str) -> BadLine:
    """The BadLine of fields, naming its record if they give a name."""
    fields = fields or {}
    name = fields.get("name")
    revision = fields.get("revision")
    return BadLine(
        name if isinstance(name, str | NotText) else None,
        revision if revision_problem(revision) is None else None,
        reason,
    )


def _fields(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object, its text that is not UTF-8 as NotText; None if it holds none."""
    try:
        value = json.loads(line.decode("utf-8", "surrogateescape"))
    except ValueError:
        return None
    if type(value) is not dict:
        return None
    return {key: _text(item) for key, item in value.items()}


def _text(value: Any) -> Any:
    """value, or NotText for a str holding what is not UTF-8 (bytes, or a lone surrogate)."""
    if type(value) is dict:
        return {key: _text(item) for key, item in value.items()}
    if not isinstance(value, str) or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return NotText(value.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            return NotText(value.encode("utf-8", "surrogatepass"))
    return value
