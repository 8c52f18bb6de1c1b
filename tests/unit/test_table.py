"""The CLI's tables: display widths and elision, for ASCII and for wide characters alike."""

from __future__ import annotations

import io
import os
import sys

import pytest

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


def test_a_terminal_that_reports_width_zero_counts_as_120_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return 1

    monkeypatch.setattr(sys, "stdout", Terminal())
    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((0, 0)))
    assert output_width() == PIPED_WIDTH == 120

    monkeypatch.setattr(os, "get_terminal_size", lambda _fd=1: os.terminal_size((60, 20)))
    assert output_width() == 60
