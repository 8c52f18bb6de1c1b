"""Plain-text tables whose last column is elided to the width of the terminal."""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

PIPED_WIDTH = 120
ELLIPSIS = "…"
_GAP = "  "
_MINIMUM_LAST_COLUMN = 20


@dataclass(frozen=True)
class Table:
    """Rendered lines, and how many last-column cells were shortened to fit the width."""

    lines: list[str]
    shortened: int
    width: int


def output_width() -> int:
    """The terminal's width when stdout is one, else 120 columns.

    A terminal that reports no width (0 columns: a serial console, some CI runners and
    container ttys) counts as 120 too, or every description would shrink to its minimum.
    """
    if sys.stdout.isatty():
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns or PIPED_WIDTH
        except OSError:
            pass
    return PIPED_WIDTH


def display_width(text: str) -> int:
    """Columns text takes in a terminal: wide East Asian characters take two."""
    if text.isascii():
        return len(text)
    return sum(
        0
        if unicodedata.combining(character)
        else 2
        if unicodedata.east_asian_width(character) in "WF"
        else 1
        for character in text
    )


def elide(text: str, width: int) -> str:
    """Text cut to at most width columns, ending in `…` when anything was cut."""
    if display_width(text) <= width:
        return text
    if text.isascii():
        return text[: width - 1] + ELLIPSIS
    kept, used = [], 0
    for character in text:
        used += display_width(character)
        if used > width - 1:
            break
        kept.append(character)
    return "".join(kept) + ELLIPSIS


def render(header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> Table:
    """Left-aligned columns; the last one is elided to what the others leave of width."""
    widths = [
        max(display_width(row[column]) for row in (header, *rows))
        for column in range(len(header) - 1)
    ]
    used = sum(widths) + len(_GAP) * len(widths)
    last_width = max(width - used, _MINIMUM_LAST_COLUMN)
    lines, shortened = [], 0
    for row in (header, *rows):
        last = elide(row[-1], last_width)
        shortened += last != row[-1]
        cells = [
            cell + " " * (size - display_width(cell))
            for cell, size in zip(row[:-1], widths, strict=True)
        ]
        lines.append(_GAP.join([*cells, last]).rstrip())
    return Table(lines=lines, shortened=shortened, width=width)
