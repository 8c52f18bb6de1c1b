"""The project's markdown documents, read as GitHub renders them: headings, anchors, code blocks.

The tests that hold the README to its commands and links read it through these.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
README = REPOSITORY / "README.md"

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_LINK = re.compile(r"(?<!!)\[[^\[\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Heading:
    """A markdown heading: its level (1 for `#`) and its text."""

    level: int
    text: str

    @property
    def anchor(self) -> str:
        """The fragment GitHub gives it: lowercased, punctuation dropped, spaces as hyphens."""
        return re.sub(r"[^\w\- ]", "", self.text.strip().lower()).replace(" ", "-")


def prose_lines(text: str) -> Iterator[str]:
    """The lines of text outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield line


def headings(text: str) -> list[Heading]:
    """Every heading of text, in order (a `#` line inside a code block is none)."""
    found = []
    for line in prose_lines(text):
        level = len(line) - len(line.lstrip("#"))
        if level and line[level : level + 1] == " ":
            found.append(Heading(level, line[level:].strip()))
    return found


def section(text: str, title: str) -> str:
    """The section of text under the heading title, up to the next heading of its level or above."""
    found: list[str] = []
    level = 0
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else next(iter(headings(line)), None)
        if level and heading is not None and heading.level <= level:
            break
        if level:
            found.append(line)
        elif heading is not None and heading.text == title:
            level = heading.level
    assert level, f"no heading {title!r}"
    return "\n".join(found)


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of text's fenced code blocks in language, in order, their indentation removed."""
    blocks, body, indent, current = [], [], "", None
    for line in text.splitlines():
        fence = _FENCE.match(line)
        if fence and current is None:
            indent, current, body = fence[1], fence[2], []
        elif fence:
            if current == language:
                blocks.append("\n".join(body) + "\n")
            current = None
        elif current is not None:
            body.append(line.removeprefix(indent))
    return blocks


def links(text: str) -> list[str]:
    """The targets of text's markdown links (not images), outside code blocks."""
    return [match[1] for match in _LINK.finditer("\n".join(prose_lines(text)))]
