"""References to records in any text: `memory:NAME`, `[[NAME]]`, and bare record names.

What editors build on: finding references in a document, the one under the cursor, what a
completion after `memory:` or `[[` would complete, and what is wrong with a reference. Columns
are code points into one line; the rpc layer converts them to the client's units.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from enum import StrEnum
from urllib.parse import quote, unquote

from lazy_memory.engine.records import Record
from lazy_memory.engine.visible import visible_line, visible_text

MEMORY_PREFIX = "memory:"
WIKI_OPEN = "[["
WIKI_CLOSE = "]]"
DOCUMENT_SCHEME = "lazy-memory"
"""The URI scheme of a record's read-only document: `lazy-memory:NAME`."""

# `memory:` takes the characters of a new record's name; a trailing dot ends the sentence.
# `[[...]]` takes anything on one line, so imported names outside that alphabet are reachable.
_REFERENCE = re.compile(
    r"memory:(?P<memory>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?)"
    r"|\[\[(?P<wiki>[^\[\]\n]+?)\]\]"
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9_-]|[A-Za-z0-9]")
_PARTIAL_NAME = re.compile(r"[A-Za-z0-9._-]*\Z")


class Form(StrEnum):
    """How a reference is written."""

    MEMORY = "memory"
    WIKI = "wiki"
    BARE = "bare"


@dataclass(frozen=True)
class Reference:
    """A record name written in a line: where the whole reference and the name itself sit."""

    name: str
    form: Form
    line: int
    start: int
    end: int
    name_start: int
    name_end: int

    def covers(self, line: int, character: int) -> bool:
        """True when the position is on this reference (its end included, as editors do)."""
        return line == self.line and self.start <= character <= self.end


@dataclass(frozen=True)
class Completion:
    """What a completion at a position would replace: the partial name typed so far."""

    form: Form
    prefix: str
    start: int
    close: bool
    """True when a `[[` reference has no `]]` yet, so the completion should add it."""


class Problem(StrEnum):
    """What can be wrong with a written reference."""

    UNKNOWN = "unknown"
    REMOVED = "removed"


def references_in(lines: Sequence[str], first_line: int = 0) -> Iterator[Reference]:
    """Every `memory:NAME` and `[[NAME]]` in the lines (numbered from first_line), in order."""
    for number, text in enumerate(lines, start=first_line):
        for match in _REFERENCE.finditer(text):
            form = Form.MEMORY if match.group("memory") is not None else Form.WIKI
            group = form.value
            yield Reference(
                name=match.group(group).strip() if form is Form.WIKI else match.group(group),
                form=form,
                line=number,
                start=match.start(),
                end=match.end(),
                name_start=match.start(group),
                name_end=match.end(group),
            )


def reference_at(
    lines: Sequence[str], line: int, character: int, is_record: Callable[[str], bool]
) -> Reference | None:
    """The reference under the position: a written one, else a bare word naming a record."""
    if not 0 <= line < len(lines):
        return None
    for reference in references_in(lines[line : line + 1], first_line=line):
        if reference.covers(line, character):
            return reference
    for match in _WORD.finditer(lines[line]):
        if match.start() <= character <= match.end() and is_record(match.group()):
            start, end = match.span()
            return Reference(match.group(), Form.BARE, line, start, end, start, end)
    return None


def completion_at(line_text: str, character: int) -> Completion | None:
    """The partial name being typed right after `memory:` or `[[`, if the cursor is there."""
    before = line_text[:character]
    partial = _PARTIAL_NAME.search(before)
    prefix = partial.group() if partial else ""
    start = character - len(prefix)
    if before[:start].endswith(MEMORY_PREFIX):
        return Completion(Form.MEMORY, prefix, start, close=False)
    if before[:start].endswith(WIKI_OPEN):
        closed = line_text[character:].lstrip().startswith(WIKI_CLOSE)
        return Completion(Form.WIKI, prefix, start, close=not closed)
    return None


def problem_with(
    reference: Reference, live: Callable[[str], bool], ever_written: bool
) -> Problem | None:
    """Whether a written reference names no record (never written, or removed since)."""
    if live(reference.name):
        return None
    return Problem.REMOVED if ever_written else Problem.UNKNOWN


def problem_message(reference: Reference, problem: Problem) -> str:
    """The diagnostic's text for a problem."""
    name = visible_line(reference.name)
    if problem is Problem.REMOVED:
        return f"memory record {name} was removed"
    return f"no memory record named {name}"


def document_uri(name: str) -> str:
    """The URI of a record's read-only document."""
    return f"{DOCUMENT_SCHEME}:{quote(name, safe='')}"


def name_in_uri(uri: str) -> str | None:
    """The record name a `lazy-memory:NAME` URI names, or None for any other URI."""
    scheme, colon, name = uri.partition(":")
    if not colon or scheme != DOCUMENT_SCHEME:
        return None
    return unquote(name.lstrip("/")) or None


def record_markdown(record: Record) -> str:
    """A record as markdown: what hover shows and what its read-only document holds.

    Its stored text is made visible (engine/visible.py): an editor shows it to a person.
    """
    writer = visible_line(f"{record.updated_by.kind.value} {record.updated_by.detail}")
    facts = (
        f"**{visible_line(record.name)}** · {record.type.value} · revision {record.revision} · "
        f"last written by {writer}, {record.updated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    )
    description, body = visible_line(record.description), visible_text(record.body)
    return f"{facts}\n\n_{description}_\n\n---\n\n{body}".rstrip() + "\n"
