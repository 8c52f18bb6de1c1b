"""Delivery: what a harness channel carries of a launch context: whole, fitted, or paged.

Claude Code shows a hook's output whole only up to a limit (10,000 characters on 2.1.332)
and a tool result only up to the size the tool declares; past either the model gets a 2 KB
preview and a file path, and a store of a few hundred records reaches a session as its first
two dozen lines. So a launch context is never handed to a channel that would cut it:

- a hook gets it whole when it fits, else a *fitted* launch context: the preamble, as many
  whole index lines as fit in priority order (`user` and `feedback` before `project` and
  `reference`, newest first within a type), and one closing line saying how many records are
  not listed, why, and the one call that reads them all;
- a tool gets *pages* of whole lines, each within its limit, each naming the next page.

No line is ever cut to fit, and every name stays reachable from what the model is given: the
closing line names the one call that returns the whole text when it fits a tool result
(`lazy_memory_recall()`), else each of its pages, counted as the tool pages the same text.

Like the renderer, it takes plain rows and gives plain tuples, so the launch hook delivers
without importing the record models.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter

from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    UNAVAILABLE,
    LaunchContext,
    Role,
    harness_length,
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
from lazy_memory.engine.kinds import RecordType

TYPE_PRIORITY = (RecordType.USER, RecordType.FEEDBACK, RecordType.PROJECT, RecordType.REFERENCE)
"""The order a fitted launch context lists records in: the user's own guidance first."""
RECALL_PAGE = "lazy_memory_recall(page={page})"
"""The call that gives a page of the launch context, as lazy_memory_recall's pages name the
next."""
_SEARCH = 'search it with lazy_search(query="in:memories ...")'
READ_ALL = (
    "Read the whole index with lazy_memory_recall(), which returns every record's line in one "
    "call, or " + _SEARCH + "."
)
"""How the closing line says to read the rest when the whole text is one tool result."""
READ_PAGES = (
    "Read the whole index in {pages:,} calls, "
    + RECALL_PAGE.format(page=1)
    + " to "
    + RECALL_PAGE.replace("{page}", "{pages}")
    + ", or "
    + _SEARCH
    + "."
)
"""How it says so when the text is more than one: recall's pages, each named."""
NOT_LISTED = (
    "({missing:,} of {total:,} memory records are not listed here: this harness shows a "
    "session-start hook's output whole only up to {limit:,} characters, and these lines are "
    "the {listed:,} most important, the user's guidance and the newest first. {read})"
)
_MARKER_ROOM = 200
"""What a fitted marker keeps clear of its limit, besides the error text, for its own words."""
_LINES_BLOCK = 1 << 20
"""Characters of a text split into lines at a time, when it is paged."""


def priority_order(records: Sequence[IndexedT]) -> Iterator[IndexedT]:
    """Records as a fitted launch context lists them: by type priority, newest first, then by
    name.

    Each type's records are sorted only when the listing reaches them: a fitted one lists
    about a hundred lines, so most launches sort only the `user` records, not the store.
    """
    by_type: dict[RecordType, list[IndexedT]] = {record_type: [] for record_type in TYPE_PRIORITY}
    for record in records:
        by_type[record.type].append(record)
    for group in by_type.values():
        by_name = sorted(group, key=attrgetter("name"))
        yield from sorted(by_name, key=attrgetter("updated_at"), reverse=True)


def fit(
    context: LaunchContext,
    records: Sequence[Indexed],
    limit_chars: int | None,
    *,
    page_limit: int,
    unreadable: Sequence[UnreadableRecord] = (),
) -> LaunchContext:
    """context (rendered whole from records) for a channel of limit_chars characters (None:
    any size): whole if it fits, else fitted.

    page_limit is the largest tool result, at which lazy_memory_recall() pages the same
    text: the closing line of a fitted launch context names its pages. unreadable are the
    records the store could not read, which the text names in one line: a fitted one names
    them too, below the lines it lists.
    """
    if not context.available:
        return _marker(context, limit_chars)
    if limit_chars is None or harness_length(context.text) <= limit_chars:
        return context._replace(limit_chars=limit_chars)
    over = context.role == Role.BUILDER and context.over_threshold
    pointer = DOCTOR_POINTER + "\n" if over else ""
    head = preamble(context.role, False) + "\n\n"
    read = _read_all(page_count(context.text, page_limit, RECALL_PAGE))
    # The closing line at its longest (every count as large as the store), so it always fits.
    closing = _closing(len(records), len(records), len(records), limit_chars, read)
    note = unreadable_line(unreadable) + "\n" if unreadable else ""
    room = (
        limit_chars
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
    closing = _closing(len(records) - len(listed), len(records), len(listed), limit_chars, read)
    body = "".join(line + "\n" for line in listed)
    newest = context.newest
    return context._replace(
        text=f"{head}{body}{note}\n{closing}\n{pointer}",
        limit_chars=limit_chars,
        listed=len(listed),
        fitted=True,
        compacted=False,
        newest=None if newest is None else newest._replace(listed=newest.name in shown),
    )


def pages(text: str, limit: int, next_call: str) -> list[str]:
    """Text cut at line ends into pages of at most limit characters, each naming the next.

    next_call is a format string with `{page}` and `{pages}`, such as
    `lazy_memory_recall(page={page})`. A single line longer than a page (only an imported
    description can be) is the one thing split, at the page's end.
    """
    chunks = ["".join(lines) for lines in _paged(text, limit, next_call)]
    total = len(chunks)
    for number in range(1, total):
        # One page at a time: the pages of a 14 MB text are never held twice.
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


def _marker(context: LaunchContext, limit_chars: int | None) -> LaunchContext:
    """The unavailable marker, its error shortened if it would not fit (never the records)."""
    text = context.text
    if limit_chars is not None and harness_length(text) > limit_chars:
        error = context.error or ""
        keep = max(limit_chars - harness_length(UNAVAILABLE) - _MARKER_ROOM, 0)
        text = UNAVAILABLE.format(error=error[:keep] + "...") + "\n"
    return context._replace(
        text=text, bytes=size_of(text), limit_chars=limit_chars, fitted=text != context.text
    )
