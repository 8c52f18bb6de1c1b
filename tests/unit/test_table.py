"""The CLI's tables: display widths and elision, for ASCII and for wide characters alike."""

from __future__ import annotations

import io
import os
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.rpc.cli.table import PIPED_WIDTH, display_width, elide, output_width, render


def test_ascii_and_wide_characters_are_measured_in_terminal_columns() -> None:
    assert display_width("deploy steps") == 12
    assert display_width("記憶") == 4
    assert display_width("e\u0301") == 1


def test_elision_cuts_to_the_width_and_marks_the_cut() -> None:
    assert elide("short", 10) == "short"
    assert elide("a" * 20, 10) == "a" * 9 + "…"
    assert elide("記憶記憶記憶", 7) == "記憶記…"
    assert display_width(elide("記憶記憶記憶", 7)) <= 7


def test_render_counts_the_cells_it_shortened() -> None:
    table = render(["NAME", "DESCRIPTION"], [["a", "x" * 200], ["b", "fits"]], width=40)

    assert table.shortened == 1
    assert max(len(line) for line in table.lines) == 40


class Terminal(io.StringIO):
    """Standard output as a terminal (of the width os.get_terminal_size says)."""

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1


def test_a_terminal_that_reports_width_zero_counts_as_120_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((0, 0)))
    assert output_width() == PIPED_WIDTH == 120

    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((60, 20)))
    assert output_width() == 60


def test_output_width_honours_columns_in_a_pipe_and_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # a pipe: no terminal
    monkeypatch.setenv("COLUMNS", "40")
    assert output_width() == 40
    for ignored in ("", "0", "-5", "wide", "٤٠"):  # ٤٠: Arabic-Indic digits are no width
        monkeypatch.setenv("COLUMNS", ignored)
        assert output_width() == PIPED_WIDTH

    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((60, 20)))
    assert output_width() == 60
    monkeypatch.setenv("COLUMNS", "40")
    assert output_width() == 40


def test_the_description_is_cut_before_the_name() -> None:
    header = ["NAME", "TYPE", "DESCRIPTION"]
    rows = [["deploy-steps", "project", "How we deploy to staging, step by step"]]

    roomy = render(header, rows, 40, elidable=[0])
    narrow = render(header, rows, 31, elidable=[0])

    assert roomy.lines[1] == "deploy-steps  project  How we deploy to…"
    assert roomy.shortened_by_column == {"NAME": 0, "TYPE": 0, "DESCRIPTION": 1}
    assert narrow.lines[1] == "deploy-st…  project  How we de…"
    assert narrow.shortened_by_column == {"NAME": 1, "TYPE": 0, "DESCRIPTION": 1}
    assert (roomy.width, narrow.width) == (40, 31)


def test_a_table_that_cannot_be_so_narrow_says_the_width_it_fits() -> None:
    rows = [["deploy-steps", "reference", "How we deploy"]]

    table = render(["NAME", "TYPE", "DESCRIPTION"], rows, 20, elidable=[0])

    # Ten columns for each cut column, the type whole, and the gaps: 33.
    assert table.width == 33 == max(display_width(line) for line in table.lines)


CELLS = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), max_size=60)


@given(
    rows=st.lists(st.tuples(CELLS, st.sampled_from(["user", "reference"]), CELLS), max_size=6),
    width=st.integers(min_value=1, max_value=160),
)
def test_every_line_fits_the_width_the_table_claims(
    rows: list[tuple[str, str, str]], width: int
) -> None:
    header = ["NAME", "TYPE", "DESCRIPTION"]
    table = render(header, rows, width, elidable=[0])

    assert all(display_width(line) <= table.width for line in table.lines)
    # It is the width asked for whenever the cut columns' floors of 10 leave room for it.
    name, kind = (max(display_width(row[column]) for row in (header, *rows)) for column in (0, 1))
    if width >= min(name, 10) + kind + 10 + 4:
        assert table.width == width
