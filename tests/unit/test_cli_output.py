"""What the CLI prints around its work: progress off a terminal, and the engine's help."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from lazy_memory.adapters.address import FORMS
from lazy_memory.rpc.cli.progress import ProgressPrinter


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_progress(stream: io.StringIO, monkeypatch: pytest.MonkeyPatch, total: int) -> str:
    monkeypatch.setattr(sys, "stderr", stream)
    progress = ProgressPrinter("importing")
    for done in range(1, total + 1):
        progress(done, total)
    return stream.getvalue()


def test_progress_off_a_terminal_is_plain_lines_without_redraw_codes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    printed = run_progress(io.StringIO(), monkeypatch, 200)

    assert "\r" not in printed
    assert "\x1b" not in printed
    lines = printed.splitlines()
    assert lines[-1] == "importing: 200/200"
    assert len(lines) == 11, "one line each tenth of the way, not one per step"
    assert all(line.startswith("importing: ") for line in lines)


def test_progress_on_a_terminal_redraws_one_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = run_progress(Terminal(), monkeypatch, 60)

    assert printed.count("\r") == 60
    assert printed.endswith("importing [##############################] 60/60\n")


def test_short_operations_print_no_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_progress(io.StringIO(), monkeypatch, 10) == ""


def test_lazy_engine_help_lists_every_listen_form() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", "engine", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "1000"},
    ).stdout
    forms = [form.strip() for form in FORMS.replace(" or ", ", ").split(",")]

    assert forms == ["unix:PATH", "tcp:HOST:PORT", "tls:HOST:PORT"]
    listen = next(line for line in shown.splitlines() if "--listen ADDRESS " in line)
    assert all(form in listen for form in forms), listen
    assert "LAZY_TLS_CA" in shown, "the help says how a client trusts a tls: daemon"
