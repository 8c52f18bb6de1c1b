"""Plain-text tables that fit the width of the terminal, or of `COLUMNS`, by eliding cells.

A table fits its width: the last column (a description) is cut first, down to 10 columns;
then the other columns that may be cut (a name), in the order given, down to 10 each. Only a
table whose floors and uncut columns are wider than the width (a terminal of 30 columns) is
wider, and says so by its width: Table.width is always the width every line fits in, which is
what a footer may claim.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

PIPED_WIDTH = 120
ELLIPSIS = "…"
_GAP = "  "
_FLOOR = 10
"""How narrow a cut column gets: `deploy-st…` still says what it is."""


@dataclass(frozen=True)
class Table:
    """Rendered lines, how many cells of each column were shortened, and the width they fit."""

    lines: list[str]
    shortened_by_column: dict[str, int]
    """For each column's title, how many of its cells were cut (every column is listed)."""
    width: int
    """The width every line fits in: the one asked for, unless the table cannot be so narrow."""

    @property
    def shortened(self) -> int:
        """How many cells were cut, in all columns."""
        return sum(self.shortened_by_column.values())


def output_width() -> int:
    """The width to fit: `COLUMNS` when it is a positive number (a pipe, or a terminal one
    wants narrower), else the terminal's width when stdout is one, else 120 columns.

    A terminal that reports no width (0 columns: a serial console, some CI runners and
    container ttys) counts as 120 too, or every description would shrink to its minimum.
    """
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isascii() and columns.isdigit() and int(columns) > 0:
        return int(columns)
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


def render(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    elidable: Sequence[int] = (),
) -> Table:
    """Left-aligned columns fitted to width: the last one cut first, then those in elidable
    (indices, in the order to cut them); see the module's doc."""
    natural = [
        max(display_width(row[column]) for row in (header, *rows)) for column in range(len(header))
    ]
    widths = list(natural)
    last = len(header) - 1
    for column in (last, *elidable):
        excess = sum(widths) + len(_GAP) * last - width
        if excess > 0:
            widths[column] = max(widths[column] - excess, min(natural[column], _FLOOR))
    lines = [_line(header, widths)]
    shortened = dict.fromkeys(header, 0)
    for row in rows:
        lines.append(_line(row, widths))
        for title, cell, size in zip(header, row, widths, strict=True):
            shortened[title] += display_width(cell) > size
    fitted = max(width, *(display_width(line) for line in lines))
    return Table(lines=lines, shortened_by_column=shortened, width=fitted)


def _line(row: Sequence[str], widths: Sequence[int]) -> str:
    cells = [elide(cell, size) for cell, size in zip(row, widths, strict=True)]
    padded = [
        cell + " " * (size - display_width(cell)) for cell, size in zip(cells, widths, strict=True)
    ]
    return _GAP.join(padded).rstrip()
