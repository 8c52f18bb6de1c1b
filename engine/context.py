"""The memory section injected into every builder and agent launch."""

from __future__ import annotations

from enum import StrEnum

from lazy_memory.engine.index import index_line
from lazy_memory.engine.records import Record

PREAMBLE = (
    "# Project memory\n"
    "These are the project's memory records: knowledge earlier sessions saved for you, one "
    "line each (name, type, description). Read a record's body with "
    'lazy_memory_recall(name="..."), search them with lazy_search(query="in:memories ..."). '
    "Do not use your harness's own memory directory: it is not shared and is lost."
)
EMPTY = "No memory records have been saved for this project yet."


class Role(StrEnum):
    """Who is being launched: a builder writes code and may save; an agent only reads."""

    BUILDER = "builder"
    AGENT = "agent"


def render_context(records: list[Record], role: Role) -> str:
    """The plain memory section: the preamble and one index line per live record."""
    lines = [index_line(record) for record in records] or [EMPTY]
    return "\n".join([PREAMBLE, "", *lines]) + "\n"
