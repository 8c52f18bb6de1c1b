"""The launch context: the text a launch injects into a harness session, and its renderer.

The rules it follows: docs/architecture.md, Injection (and its glossary for the words).

One renderer for both roles: the role's preamble and the plain index, or the role's compact
preamble, the compact's summary, everything written since its watermark and what was removed
since; a marker when the store cannot be read, and one line naming the records it holds but
could not read (the others are listed as ever); and, over the advisory size, a one-line
pointer to `lazy doctor` for builders, never counted in the size. What a harness channel
carries of it (whole, fitted to a limit, or paged) is engine/delivery.py's.

It takes plain rows (anything Indexed, a compact's summary and watermark) and gives plain
tuples: the launch hook renders with it without importing the record models (pydantic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any, NamedTuple, Protocol

from lazy_memory.engine.index import (
    Indexed,
    IndexedT,
    IndexTally,
    Newest,
    UnreadableRecord,
    index_line,
    unreadable_line,
)
from lazy_memory.engine.visible import visible_line, visible_text


class Role(StrEnum):
    """Who is being launched: a builder writes code and may save; an agent only reads."""

    BUILDER = "builder"
    AGENT = "agent"


_HEADING = "# Project memory\n"
_PLAIN = (
    "These are the project's memory records: knowledge earlier sessions saved for you, one "
    "line each (name, type, description)."
)
_SUMMARIZED = (
    "These are the project's memory records: knowledge earlier sessions saved for you, "
    "summarized by theme, with every record named."
)
_READING = (
    ' Read a record\'s body with lazy_memory_recall(name="..."), search them with '
    'lazy_search(query="in:memories ...").'
)
_WRITING = {
    Role.BUILDER: " Save new knowledge with lazy_memory_save, never in your harness's own "
    "memory files: they are not shared.",
    Role.AGENT: " Agents are read-only: save nothing, neither here nor in your harness's own "
    "memory files; put anything worth remembering in your final summary, for the human or "
    "builder to decide.",
}
PREAMBLES = {role: _HEADING + _PLAIN + _READING + _WRITING[role] for role in Role}
"""Each role's preamble before the plain index: the session's one instruction about memory."""
COMPACT_PREAMBLES = {role: _HEADING + _SUMMARIZED + _READING + _WRITING[role] for role in Role}
"""Each role's preamble before a compact's summary."""
MEASURED_ROLE = Role.BUILDER
"""The role whose launch context the size rules measure (never-grow, doctor, `compact --show`): an
agent's differs by its preamble alone, by as many bytes with a compact as without, so every
comparison between launch contexts comes out the same."""
EMPTY = "No memory records have been saved for this project yet."
WRITTEN_SINCE = "## Written since that summary (these lines supersede it)"
REMOVED_SINCE = "## Removed since that summary"
UNAVAILABLE = (
    "MEMORY INDEX UNAVAILABLE ({error})\n"
    "Memory records may exist but could not be read just now. Retry with "
    'lazy_memory_recall() or lazy_search(query="in:memories ...") before assuming there are '
    "none."
)
OVER_THRESHOLD_LOG = (
    "Injected memory context is over the advisory size threshold. Run lazy doctor for details."
)
DOCTOR_POINTER = (
    "(This memory section is over its advisory size: run `lazy doctor` to see why and what helps.)"
)
_BATCH = 1_000
"""Records whose lines launch_context joins at a time."""


def preamble(role: Role, compacted: bool) -> str:
    """The preamble a launch of role gets: before a compact's summary, or the plain index."""
    return (COMPACT_PREAMBLES if compacted else PREAMBLES)[role]


class CompactView(Protocol):
    """What a launch context shows of a compact: its summary, and the (name, revision) pairs of
    the records it was made from. The engine's Compact is one; so is what the launch hook
    reads without the models."""

    @property
    def summary(self) -> str:
        """The compact's summary, as stored."""
        ...

    @property
    def watermark(self) -> Mapping[str, int]:
        """The revision of each record the summary covers."""
        ...


class LaunchContext(NamedTuple):
    """The launch context: the text a launch injects, the size that counts, how it was made,
    and what of the store it shows in the channel it was made for (limit_chars).

    Rendered, it is the whole text (limit_chars None, fitted False); engine/delivery.py
    fits it to a channel's limit. The first eight fields are what `lazy/memory/context`
    answers (wire/memory.py ContextPage); as_json is what `--json`, the launch log and the
    launch cache write.
    """

    role: Role
    text: str
    bytes: int
    """The whole text's size (UTF-8 bytes, the doctor pointer not counted), as doctor has it."""
    warn_bytes: int
    over_threshold: bool
    available: bool
    compacted: bool
    error: str | None = None
    """Why the store could not be read, when it could not (available is then False)."""
    limit_chars: int | None = None
    """The channel's limit; None for one that carries any size (a file, a terminal, a cache)."""
    records: int = 0
    """The live records the store could read."""
    listed: int = 0
    """Records named in the text: all of them unless it was fitted."""
    fitted: bool = False
    newest: Newest | None = None

    @property
    def chars(self) -> int:
        """The text's length as the harness counts it (see harness_length)."""
        return harness_length(self.text)

    def as_json(self) -> dict[str, Any]:
        """Every field as JSON, and chars: what `--json` prints and the launch log keeps."""
        return {
            "role": self.role.value,
            "text": self.text,
            "chars": self.chars,
            "bytes": self.bytes,
            "limit_chars": self.limit_chars,
            "warn_bytes": self.warn_bytes,
            "over_threshold": self.over_threshold,
            "records": self.records,
            "listed": self.listed,
            "fitted": self.fitted,
            "available": self.available,
            "compacted": self.compacted,
            "error": self.error,
            "newest": None if self.newest is None else self.newest.as_json(),
        }


def harness_length(text: str) -> int:
    """Text's length as Claude Code (JavaScript) counts it: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def size_of(text: str) -> int:
    """A launch context's size: its text's UTF-8 bytes."""
    # ASCII text is its own UTF-8: no need to encode a copy of a many-megabyte text.
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def written_since(records: Sequence[IndexedT], compact: CompactView) -> list[IndexedT]:
    """Live records the compact does not cover at their current revision."""
    watermark = compact.watermark
    return [r for r in records if watermark.get(r.name) != r.revision]


def assemble(
    role: Role,
    records: Sequence[Indexed],
    compact: CompactView | None,
    removed: Sequence[str],
    unreadable: Sequence[UnreadableRecord] = (),
) -> str:
    """The launch context's text before any size pointer: what the size rules and never-grow
    measure.

    Descriptions sit inside their own line with whitespace collapsed, so no record can add
    a line that imitates the preamble, a heading or the unavailable marker; every stored text
    in it is made visible (engine/visible.py), so the sizes measure what is printed.
    """
    return "\n".join(_parts(role, [records], compact, removed, unreadable))


def assembled_size(
    role: Role,
    records: Sequence[Indexed],
    compact: CompactView | None,
    removed: Sequence[str],
    unreadable: Sequence[UnreadableRecord] = (),
) -> int:
    """size_of(assemble(...)), measured line by line: the text itself is never built."""
    size = -1  # n parts are joined by n - 1 newlines
    for part in _parts(role, [records], compact, removed, unreadable):
        size += size_of(part) + 1
    return size


def launch_context(
    role: Role,
    records: Sequence[Indexed],
    compact: CompactView | None,
    removed: Sequence[str],
    warn_bytes: int,
    unreadable: Sequence[UnreadableRecord] = (),
) -> LaunchContext:
    """The launch context of role, rendered whole: with the builder's doctor pointer when over
    size, and a line naming the records the store holds but could not read."""
    batches = (records[start : start + _BATCH] for start in range(0, len(records), _BATCH))
    return finished(role, opened(role, batches, compact, removed), unreadable, warn_bytes)


class Opened(NamedTuple):
    """A launch context's lines up to its end, as a read of the index makes them (opened): the
    end comes once the store has said which records it could not read (finished)."""

    parts: list[str]
    """The preamble, a blank, and the rest, each batch's index lines joined into one part."""
    compacted: bool
    records: int
    newest: Indexed | None


def opened(
    role: Role,
    batches: Iterable[Sequence[Indexed]],
    compact: CompactView | None,
    removed: Sequence[str],
) -> Opened:
    """The lines of the records in batches (ordered by name, as a store lists them).

    Each batch's lines are joined as it comes: at 100,000 records the text is 14 MB, and
    its 100,000 lines as strings would be 19 MB more.
    """
    tally = IndexTally()
    parts = list(_body(role, tally.counted(batches), compact, removed, joined=True))
    return Opened(parts, compact is not None, tally.records, tally.newest)


def finished(
    role: Role, lines: Opened, unreadable: Sequence[UnreadableRecord], warn_bytes: int
) -> LaunchContext:
    """The launch context of an opened one, ended with the unreadable records' line (or the
    empty store's) and, for a builder over warn_bytes, the doctor pointer."""
    parts = lines.parts
    parts += _ending(lines.compacted, len(parts) == _EMPTY_BODY, unreadable)
    size = sum(map(size_of, parts)) + len(parts) - 1
    over = size > warn_bytes
    if over and role == Role.BUILDER:
        # Joined in, not appended: a many-megabyte text is never copied to add a line.
        parts[-1:] = [DOCTOR_POINTER, ""]
    return LaunchContext(
        role=role,
        text="\n".join(parts),
        bytes=size,
        warn_bytes=warn_bytes,
        over_threshold=over,
        available=True,
        compacted=lines.compacted,
        records=lines.records,
        listed=lines.records,
        newest=None if lines.newest is None else Newest.of(lines.newest, listed=True),
    )


def reframed(context: LaunchContext, role: Role) -> LaunchContext:
    """The same launch context (rendered whole) for another role: its own preamble, and the
    doctor pointer added or taken off as its size calls for."""
    if context.role == role or not context.available:
        return context._replace(role=role)
    old, new = preamble(context.role, context.compacted), preamble(role, context.compacted)
    pointer = DOCTOR_POINTER + "\n"
    had_pointer = context.role == Role.BUILDER and context.over_threshold
    size = context.bytes - size_of(old) + size_of(new)
    over = size > context.warn_bytes
    wants_pointer = role == Role.BUILDER and over
    end = len(context.text) - (len(pointer) if had_pointer else 0)
    return context._replace(
        role=role,
        text="".join((new, context.text[len(old) : end], pointer if wants_pointer else "")),
        bytes=size,
        over_threshold=over,
    )


def warnings_of(context: LaunchContext) -> list[str]:
    """What assembling context says in the log: the advisory size line when it is over (at
    every launch, so a launch context kept to be shown again keeps it to be said again)."""
    return [OVER_THRESHOLD_LOG] if context.over_threshold else []


def unavailable_context(role: Role, error: str, warn_bytes: int) -> LaunchContext:
    """The launch context when the store cannot be read, its marker: never the empty index."""
    # An error may quote stored text (a name, a path): it is shown as any stored text is.
    error = visible_line(" ".join(error.split()))
    text = UNAVAILABLE.format(error=error) + "\n"
    return LaunchContext(
        role=role,
        text=text,
        bytes=size_of(text),
        warn_bytes=warn_bytes,
        over_threshold=False,
        available=False,
        compacted=False,
        error=error,
    )


def _parts(
    role: Role,
    batches: Iterable[Sequence[Indexed]],
    compact: CompactView | None,
    removed: Sequence[str],
    unreadable: Sequence[UnreadableRecord],
) -> Iterator[str]:
    """The launch context's lines, one part each; the last is empty, for the final newline.

    One at a time, so a measure of a 100,000-record launch context never holds all its lines.
    """
    count = 0
    for part in _body(role, batches, compact, removed):
        count += 1
        yield part
    yield from _ending(compact is not None, count == _EMPTY_BODY, unreadable)


_EMPTY_BODY = 2
"""The parts of a plain launch context with no index line: the preamble and a blank."""


def _body(
    role: Role,
    batches: Iterable[Sequence[Indexed]],
    compact: CompactView | None,
    removed: Sequence[str],
    *,
    joined: bool = False,
) -> Iterator[str]:
    """The launch context's lines up to its end (_ending). With joined, a batch's index lines come
    as one part, joined by newlines as the parts are."""

    def lines(records: Sequence[Indexed]) -> Iterator[str]:
        if not joined:
            yield from map(index_line, records)
        elif records:
            yield "\n".join(map(index_line, records))

    yield preamble(role, compact is not None)
    yield ""
    if compact is None:
        for batch in batches:
            yield from lines(batch)
        return
    # The compact slot is stored text too (a model's words, names and descriptions).
    yield visible_text(compact.summary.rstrip("\n"))
    headed = False
    for batch in batches:
        newer = written_since(batch, compact)
        if newer and not headed:
            yield ""
            yield WRITTEN_SINCE
            headed = True
        yield from lines(newer)
    if removed:
        yield ""
        yield REMOVED_SINCE
        for name in removed:
            yield f"- {visible_line(name)}"


def _ending(compacted: bool, empty: bool, unreadable: Sequence[UnreadableRecord]) -> Iterator[str]:
    """The launch context's last lines: the records the store could not read, named in one line
    (never the empty store's line: a store holding only those is not empty), or the empty
    store's line; then the final newline's empty part."""
    if unreadable:
        if compacted:
            yield ""
        yield unreadable_line(unreadable)
    elif empty:
        yield EMPTY
    yield ""
