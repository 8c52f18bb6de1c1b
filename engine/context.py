"""The memory section injected into every builder and agent launch.

The rules it follows: docs/architecture.md, Injection.

One renderer for both roles: the plain index, or the compact plus everything written since
its watermark plus what was removed since; a marker when the store cannot be read; and, over
the advisory size, a one-line pointer to `lazy doctor` for builders, never counted in the size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.index import Indexed, IndexedT, index_line
from lazy_memory.engine.visible import visible_line, visible_text

PREAMBLE = (
    "# Project memory\n"
    "These are the project's memory records: knowledge earlier sessions saved for you, one "
    "line each (name, type, description). Read a record's body with "
    'lazy_memory_recall(name="..."), search them with lazy_search(query="in:memories ..."). '
    "Do not use your harness's own memory directory: it is not shared and is lost."
)
COMPACT_PREAMBLE = (
    "# Project memory\n"
    "These are the project's memory records: knowledge earlier sessions saved for you, "
    "summarized by theme, with every record named. Read a record's body with "
    'lazy_memory_recall(name="..."), search them with lazy_search(query="in:memories ..."). '
    "Do not use your harness's own memory directory: it is not shared and is lost."
)
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


class Role(StrEnum):
    """Who is being launched: a builder writes code and may save; an agent only reads."""

    BUILDER = "builder"
    AGENT = "agent"


class LaunchContext(BaseModel):
    """The section a launch injects, with the size that counts and how it was made."""

    role: Role
    text: str
    bytes: int
    warn_bytes: int
    over_threshold: bool
    available: bool
    compacted: bool
    error: str | None = None
    """Why the store could not be read, when it could not (available is then False)."""


def size_of(text: str) -> int:
    """A section's size: its UTF-8 bytes."""
    # ASCII text is its own UTF-8: no need to encode a copy of a many-megabyte section.
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def written_since(records: Sequence[IndexedT], compact: Compact) -> list[IndexedT]:
    """Live records the compact does not cover at their current revision."""
    return [r for r in records if compact.watermark.get(r.name) != r.revision]


def assemble(records: Sequence[Indexed], compact: Compact | None, removed: Sequence[str]) -> str:
    """The section before any size pointer: what the size rules and never-grow measure.

    Descriptions sit inside their own line with whitespace collapsed, so no record can add
    a line that imitates the preamble, a heading or the unavailable marker; every stored text
    in it is made visible (engine/visible.py), so the sizes measure what is printed.
    """
    return "\n".join(_parts([records], compact, removed))


def assembled_size(
    records: Sequence[Indexed], compact: Compact | None, removed: Sequence[str]
) -> int:
    """size_of(assemble(...)), measured line by line: the section itself is never built."""
    size = -1  # n parts are joined by n - 1 newlines
    for part in _parts([records], compact, removed):
        size += size_of(part) + 1
    return size


def launch_context(
    role: Role,
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: Sequence[str],
    warn_bytes: int,
) -> LaunchContext:
    """The section for a launch of role, with the builder's doctor pointer when over size."""
    batches = (records[start : start + _BATCH] for start in range(0, len(records), _BATCH))
    return batched_launch_context(role, batches, compact, removed, warn_bytes)


def batched_launch_context(
    role: Role,
    batches: Iterable[Sequence[Indexed]],
    compact: Compact | None,
    removed: Sequence[str],
    warn_bytes: int,
) -> LaunchContext:
    """launch_context of the records in batches (ordered by name, as a store lists them).

    Each batch's lines are joined as it comes: at 100,000 records the section is 14 MB, and
    its 100,000 lines as strings would be 19 MB more.
    """
    parts = list(_parts(batches, compact, removed, joined=True))
    size = sum(map(size_of, parts)) + len(parts) - 1
    over = size > warn_bytes
    if over and role == Role.BUILDER:
        # Joined in, not appended: a many-megabyte section is never copied to add a line.
        parts[-1:] = [DOCTOR_POINTER, ""]
    return LaunchContext(
        role=role,
        text="\n".join(parts),
        bytes=size,
        warn_bytes=warn_bytes,
        over_threshold=over,
        available=True,
        compacted=compact is not None,
    )


def reframed(context: LaunchContext, role: Role) -> LaunchContext:
    """The same section for a launch of another role: the doctor pointer added or taken off."""
    text = context.text
    if context.over_threshold and context.role != role:
        pointer = DOCTOR_POINTER + "\n"
        text = text + pointer if role == Role.BUILDER else text.removesuffix(pointer)
    return context.model_copy(update={"role": role, "text": text})


def unavailable_context(role: Role, error: str, warn_bytes: int) -> LaunchContext:
    """The marker a launch gets when the store cannot be read: never the empty index."""
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
    batches: Iterable[Sequence[Indexed]],
    compact: Compact | None,
    removed: Sequence[str],
    *,
    joined: bool = False,
) -> Iterator[str]:
    """The section's lines, one part each; the last is empty, for the final newline.

    One at a time, so a measure of a 100,000-record section never holds all its lines. With
    joined, a batch's index lines come as one part, joined by newlines as the parts are.
    """

    def lines(records: Sequence[Indexed]) -> Iterator[str]:
        if not joined:
            yield from map(index_line, records)
        elif records:
            yield "\n".join(map(index_line, records))

    if compact is None:
        yield PREAMBLE
        yield ""
        empty = True
        for batch in batches:
            empty = empty and not batch
            yield from lines(batch)
        if empty:
            yield EMPTY
        yield ""
        return
    # The compact slot is stored text too (a model's words, names and descriptions).
    yield visible_text(compact.preamble)
    yield ""
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
    yield ""
