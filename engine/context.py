"""The memory section injected into every builder and agent launch (ARCHITECTURE.md §4).

One renderer for both roles: the plain index, or the compact plus everything written since
its watermark plus what was removed since; a marker when the store cannot be read; and, over
the advisory size, a one-line pointer to `lazy doctor` for builders, never counted in the size.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.index import index_line
from lazy_memory.engine.records import Record

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


def size_of(text: str) -> int:
    """A section's size: its UTF-8 bytes."""
    return len(text.encode("utf-8"))


def written_since(records: list[Record], compact: Compact) -> list[Record]:
    """Live records the compact does not cover at their current revision."""
    return [r for r in records if compact.watermark.get(r.name) != r.revision]


def assemble(records: list[Record], compact: Compact | None, removed: list[str]) -> str:
    """The section before any size pointer: what the size rules and never-grow measure.

    Descriptions sit inside their own line with whitespace collapsed, so no record can add
    a line that imitates the preamble, a heading or the unavailable marker.
    """
    if compact is None:
        lines = [index_line(record) for record in records] or [EMPTY]
        return "\n".join([PREAMBLE, "", *lines]) + "\n"
    parts = [compact.preamble, "", compact.summary.rstrip("\n")]
    newer = written_since(records, compact)
    if newer:
        parts += ["", WRITTEN_SINCE, *(index_line(record) for record in newer)]
    if removed:
        parts += ["", REMOVED_SINCE, *(f"- {name}" for name in removed)]
    return "\n".join(parts) + "\n"


def launch_context(
    role: Role, records: list[Record], compact: Compact | None, removed: list[str], warn_bytes: int
) -> LaunchContext:
    """The section for a launch of role, with the builder's doctor pointer when over size."""
    text = assemble(records, compact, removed)
    size = size_of(text)
    over = size > warn_bytes
    if over and role == Role.BUILDER:
        text += DOCTOR_POINTER + "\n"
    return LaunchContext(
        role=role,
        text=text,
        bytes=size,
        warn_bytes=warn_bytes,
        over_threshold=over,
        available=True,
        compacted=compact is not None,
    )


def unavailable_context(role: Role, error: str, warn_bytes: int) -> LaunchContext:
    """The marker a launch gets when the store cannot be read: never the empty index."""
    text = UNAVAILABLE.format(error=" ".join(error.split())) + "\n"
    return LaunchContext(
        role=role,
        text=text,
        bytes=size_of(text),
        warn_bytes=warn_bytes,
        over_threshold=False,
        available=False,
        compacted=False,
    )
