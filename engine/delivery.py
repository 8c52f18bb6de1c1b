"""What a harness channel carries of the memory section: whole, fitted to a limit, or paged.

Claude Code shows a hook's output whole only up to a limit (10,000 characters on 2.1.332)
and a tool result only up to the size the tool declares; past either the model gets a 2 KB
preview and a file path, and a store of a few hundred records reaches a session as its first
two dozen lines. So a section is never handed to a channel that would cut it:

- a hook gets the section whole when it fits, else a *fitted* section: the preamble, as many
  whole index lines as fit in priority order (`user` and `feedback` before `project` and
  `reference`, newest first within a type), and one closing line saying how many records are
  not listed, why, and the one call that reads them all;
- a tool gets *pages* of whole lines, each within its limit, each naming the next page.

No line is ever cut to fit, and every name stays reachable from what the model is given: the
closing line names the one call that returns the whole section when it fits a tool result
(`lazy_memory_recall()`), else each of its pages, counted as the tool pages the same section.

Like the renderer, it takes plain rows and gives plain tuples, so the launch hook delivers
without importing the record models.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any, NamedTuple

from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    UNAVAILABLE,
    LaunchContext,
    Role,
    preamble,
    size_of,
)
from lazy_memory.engine.index import (
    Indexed,
    IndexedT,
    UnreadableRecord,
    index_line,
    unreadable_line,
)
from lazy_memory.engine.json_time import json_time
from lazy_memory.engine.kinds import RecordType

TYPE_PRIORITY = (RecordType.USER, RecordType.FEEDBACK, RecordType.PROJECT, RecordType.REFERENCE)
"""The order a fitted section lists records in: the user's own guidance first."""
RECALL_PAGE = "lazy_memory_recall(page={page})"
"""The call that gives a page of the section, as lazy_memory_recall's pages name the next."""
_SEARCH = 'search it with lazy_search(query="in:memories ...")'
READ_ALL = (
    "Read the whole index with lazy_memory_recall(), which returns every record's line in one "
    "call, or " + _SEARCH + "."
)
"""How the closing line says to read the rest when the whole section is one tool result."""
READ_PAGES = (
    "Read the whole index in {pages:,} calls, "
    + RECALL_PAGE.format(page=1)
    + " to "
    + RECALL_PAGE.replace("{page}", "{pages}")
    + ", or "
    + _SEARCH
    + "."
)
"""How it says so when the section is more than one: recall's pages, each named."""
NOT_LISTED = (
    "({missing:,} of {total:,} memory records are not listed here: this harness shows a "
    "session-start hook's output whole only up to {limit:,} characters, and these lines are "
    "the {listed:,} most important, the user's guidance and the newest first. {read})"
)
_MARKER_ROOM = 200
"""What a fitted marker keeps clear of its limit, besides the error text, for its own words."""
_LINES_BLOCK = 1 << 20
"""Characters of a section split into lines at a time, when it is paged."""


class Newest(NamedTuple):
    """The most recently written live record, and whether a launch listed it."""

    name: str
    revision: int
    updated_at: datetime
    listed: bool

    def as_json(self) -> dict[str, Any]:
        """As JSON, the way the models write their fields."""
        return {
            "name": self.name,
            "revision": self.revision,
            "updated_at": json_time(self.updated_at),
            "listed": self.listed,
        }


class Delivery(NamedTuple):
    """The section a channel carries, and what of the store it shows."""

    role: Role
    text: str
    chars: int
    """The text's length as the harness counts it (see harness_length)."""
    bytes: int
    """The whole section's size (UTF-8 bytes, the doctor pointer not counted), as doctor has it."""
    limit_chars: int | None
    """The channel's limit; None for one that carries any size (a file, a terminal)."""
    warn_bytes: int
    over_threshold: bool
    records: int
    listed: int
    """Records named in the text: all of them unless it was fitted."""
    fitted: bool
    available: bool
    compacted: bool
    error: str | None = None
    """Why the store could not be read, when it could not."""
    newest: Newest | None = None

    def as_json(self) -> dict[str, Any]:
        """Every field as JSON, in order: what `--json` prints and the launch log keeps."""
        fields = self._asdict()
        fields["role"] = self.role.value
        fields["newest"] = None if self.newest is None else self.newest.as_json()
        return fields


def harness_length(text: str) -> int:
    """Text's length as Claude Code (JavaScript) counts it: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def priority_order(records: Sequence[IndexedT]) -> Iterator[IndexedT]:
    """Records as a fitted section lists them: by type priority, newest first, then by name.

    Each type's records are sorted only when the listing reaches them: a fitted section lists
    about a hundred lines, so most launches sort only the `user` records, not the store.
    """
    by_type: dict[RecordType, list[IndexedT]] = {record_type: [] for record_type in TYPE_PRIORITY}
    for record in records:
        by_type[record.type].append(record)
    for group in by_type.values():
        by_name = sorted(group, key=attrgetter("name"))
        yield from sorted(by_name, key=attrgetter("updated_at"), reverse=True)


def deliver(
    context: LaunchContext,
    records: Sequence[Indexed],
    limit: int | None,
    *,
    page_limit: int,
    unreadable: Sequence[UnreadableRecord] = (),
) -> Delivery:
    """The section for a channel of limit characters (None: any size): whole if it fits.

    page_limit is the largest tool result, at which lazy_memory_recall() pages the same
    section: the closing line of a fitted section names its pages. unreadable are the records
    the store could not read, which the section names in one line: a fitted one names them
    too, below the lines it lists.
    """
    if not context.available:
        return _marker(context, limit)
    newest = max(records, key=attrgetter("updated_at"), default=None)
    if limit is None or harness_length(context.text) <= limit:
        return _delivery(context, context.text, limit, len(records), records, newest, set())
    over = context.role == Role.BUILDER and context.over_threshold
    pointer = DOCTOR_POINTER + "\n" if over else ""
    head = preamble(context.role, False) + "\n\n"
    read = _read_all(page_count(context.text, page_limit, RECALL_PAGE))
    # The closing line at its longest (every count as large as the store), so it always fits.
    closing = _closing(len(records), len(records), len(records), limit, read)
    note = unreadable_line(unreadable) + "\n" if unreadable else ""
    room = (
        limit
        - harness_length(head)
        - harness_length(note)
        - harness_length(pointer)
        - harness_length(closing)
        - 2
    )
    listed: list[str] = []
    shown: set[str] = set()
    for record in priority_order(records):
        line = index_line(record)
        cost = harness_length(line) + 1
        if cost > room:
            break
        room -= cost
        listed.append(line)
        shown.add(record.name)
    closing = _closing(len(records) - len(listed), len(records), len(listed), limit, read)
    body = "".join(line + "\n" for line in listed)
    text = f"{head}{body}{note}\n{closing}\n{pointer}"
    return _delivery(context, text, limit, len(listed), records, newest, shown, fitted=True)


def pages(text: str, limit: int, next_call: str) -> list[str]:
    """Text cut at line ends into pages of at most limit characters, each naming the next.

    next_call is a format string with `{page}` and `{pages}`, such as
    `lazy_memory_recall(page={page})`. A single line longer than a page (only an imported
    description can be) is the one thing split, at the page's end.
    """
    chunks = ["".join(lines) for lines in _paged(text, limit, next_call)]
    total = len(chunks)
    for number in range(1, total):
        # One page at a time: the pages of a 14 MB section are never held twice.
        chunks[number - 1] += "\n" + _footer(next_call, number, total) + "\n"
    return chunks


def page(text: str, limit: int, next_call: str, number: int) -> tuple[str | None, int]:
    """Page number (from 1) of pages(text, limit, next_call), None past the last, and how
    many pages there are: without holding the others."""
    shown: list[str] | None = None
    total = 0
    for lines in _paged(text, limit, next_call):
        total += 1
        if total == number:
            shown = lines
    if shown is None:
        return None, total
    chunk = "".join(shown)
    return (
        chunk if number == total else chunk + "\n" + _footer(next_call, number, total) + "\n"
    ), total


def page_count(text: str, limit: int, next_call: str) -> int:
    """How many pages pages(text, limit, next_call) has, without making them."""
    if harness_length(text) <= _room(limit, next_call):
        return 1
    return sum(1 for _ in _paged(text, limit, next_call))


def _paged(text: str, limit: int, next_call: str) -> Iterator[list[str]]:
    """The lines of each page of text, before its footer; a page at least, if text is empty."""
    room = _room(limit, next_call)
    current: list[str] = []
    used = 0
    for line in _lines_within(_lines(text), room):
        cost = harness_length(line)
        if current and used + cost > room:
            yield current
            current, used = [], 0
        current.append(line)
        used += cost
    yield current


def _room(limit: int, next_call: str) -> int:
    """The characters of a page left for the text, once its footer is written."""
    return max(limit - harness_length(_footer(next_call, 99_999, 99_999)) - 1, 1)


def _footer(next_call: str, number: int, total: int) -> str:
    call = next_call.format(page=number + 1, pages=total)
    return f"(page {number} of {total} of this memory index: {call} gives page {number + 1})"


def _lines(text: str) -> Iterator[str]:
    """text.splitlines(keepends=True), a block of text at a time rather than all at once.

    A block's last line is carried into the next block, as it may go on there (a `\r` at a
    block's end may be the first half of a `\r\n`); the lines before it cannot.
    """
    carried = ""
    for start in range(0, len(text), _LINES_BLOCK):
        lines = (carried + text[start : start + _LINES_BLOCK]).splitlines(keepends=True)
        carried = lines.pop()
        yield from lines
    if carried:
        yield carried


def _lines_within(lines: Iterable[str], room: int) -> Iterator[str]:
    for line in lines:
        while harness_length(line) > room:
            cut = room
            while harness_length(line[:cut]) > room:
                cut -= 1
            yield line[:cut] + "\n"
            line = line[cut:]
        yield line


def _read_all(pages: int) -> str:
    return READ_ALL if pages == 1 else READ_PAGES.format(pages=pages)


def _closing(missing: int, total: int, listed: int, limit: int, read: str) -> str:
    return NOT_LISTED.format(missing=missing, total=total, listed=listed, limit=limit, read=read)


def _marker(context: LaunchContext, limit: int | None) -> Delivery:
    """The unavailable marker, its error shortened if it would not fit (never the records)."""
    text = context.text
    if limit is not None and harness_length(text) > limit:
        error = context.error or ""
        keep = max(limit - harness_length(UNAVAILABLE) - _MARKER_ROOM, 0)
        text = UNAVAILABLE.format(error=error[:keep] + "...") + "\n"
    return Delivery(
        role=context.role,
        text=text,
        chars=harness_length(text),
        bytes=size_of(text),
        limit_chars=limit,
        warn_bytes=context.warn_bytes,
        over_threshold=False,
        records=0,
        listed=0,
        fitted=text != context.text,
        available=False,
        compacted=False,
        error=context.error,
    )


def _delivery(
    context: LaunchContext,
    text: str,
    limit: int | None,
    listed: int,
    records: Sequence[Indexed],
    newest: Indexed | None,
    shown: set[str],
    *,
    fitted: bool = False,
) -> Delivery:
    return Delivery(
        role=context.role,
        text=text,
        chars=harness_length(text),
        bytes=context.bytes,
        limit_chars=limit,
        warn_bytes=context.warn_bytes,
        over_threshold=context.over_threshold,
        records=len(records),
        listed=listed,
        fitted=fitted,
        available=True,
        compacted=context.compacted and not fitted,
        newest=None
        if newest is None
        else Newest(
            name=newest.name,
            revision=newest.revision,
            updated_at=newest.updated_at,
            listed=not fitted or newest.name in shown,
        ),
    )
