"""Reading a launch's memory section back, the way a model reads it: line by line.

The parser knows only the frame the renderer promises (docs/architecture.md, Injection): a
role's preamble, one `- name (type): description` line per record, and with a compact the summary,
the "Written since" lines and the "Removed since" names. Whatever a record holds, it must
come back as exactly the record that was saved, and every other line must be the renderer's
own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lazy_memory.engine.context import (
    COMPACT_PREAMBLES,
    EMPTY,
    PREAMBLES,
    REMOVED_SINCE,
    WRITTEN_SINCE,
)
from lazy_memory.engine.records import RecordType
from lazy_memory.engine.visible import visible_line

_TYPES = "|".join(member.value for member in RecordType)
# The first ` (type): ` ends the name: a reader cannot know better, so no name may hold one.
RECORD_LINE = re.compile(rf"- (?P<name>.+?) \((?P<type>{_TYPES})\): (?P<description>.*)")


@dataclass(frozen=True)
class IndexLine:
    """One record as its line in the section shows it."""

    name: str
    type: str
    description: str


@dataclass
class Section:
    """A section read back: its record lines by part, and the lines that were not records."""

    preamble: list[str] = field(default_factory=list)
    records: list[IndexLine] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    written_since: list[IndexLine] = field(default_factory=list)
    removed_since: list[str] = field(default_factory=list)
    empty: bool = False


class FramingBroken(AssertionError):
    """A line of the section is neither the renderer's own nor a record's line."""


def parse_plain(text: str) -> Section:
    """A section without a compact: a role's preamble, a blank line, one line per record."""
    lines = _lines(text)
    preamble = _opening(lines, PREAMBLES.values())
    if preamble is None or lines[len(preamble)] != "":
        raise FramingBroken(f"the section does not open with a preamble: {lines[:4]!r}")
    section = Section(preamble=preamble)
    rest = lines[len(preamble) + 1 :]
    if rest == [EMPTY]:
        section.empty = True
        return section
    section.records = [record_line(line) for line in rest]
    return section


def parse_compacted(text: str, summary: str) -> Section:
    """A section with a compact: a role's compact preamble and the compact's summary, then
    what is newer and removed."""
    lines = _lines(text)
    preamble = _opening(lines, COMPACT_PREAMBLES.values()) or []
    head = [*preamble, "", *summary.rstrip("\n").split("\n")]
    if not preamble or lines[: len(head)] != head:
        raise FramingBroken("the section does not open with a compact preamble and the summary")
    section = Section(preamble=preamble, summary=summary.split("\n"))
    rest = lines[len(head) :]
    if rest[:2] == ["", WRITTEN_SINCE]:
        rest = rest[2:]
        while rest and rest[0] != "":
            section.written_since.append(record_line(rest.pop(0)))
    if rest[:2] == ["", REMOVED_SINCE]:
        rest = rest[2:]
        while rest and rest[0].startswith("- "):
            section.removed_since.append(rest.pop(0)[2:])
    if rest:
        raise FramingBroken(f"lines the renderer does not write: {rest[:3]!r}")
    return section


def _opening(lines: list[str], preambles: Iterable[str]) -> list[str] | None:
    """The lines of the preamble among preambles that lines open with, if one does."""
    for preamble in preambles:
        head = preamble.split("\n")
        if lines[: len(head)] == head:
            return head
    return None


def record_line(line: str) -> IndexLine:
    """One `- name (type): description` line, or FramingBroken."""
    match = RECORD_LINE.fullmatch(line)
    if match is None:
        raise FramingBroken(f"not a record line: {line!r}")
    return IndexLine(match["name"], match["type"], match["description"])


def shown(description: str) -> str:
    """A description as its index line shows it: every whitespace run one space, the rest
    made visible (engine/visible.py)."""
    return visible_line(" ".join(description.split()))


def _lines(text: str) -> list[str]:
    if not text.endswith("\n"):
        raise FramingBroken("the section does not end with a line break")
    # splitlines, not split("\n"): a model's tokenizer breaks lines at \u2028, \x85 and the
    # rest too, and none of them may appear inside a record's line.
    return text[:-1].splitlines() if text != "\n" else [""]
