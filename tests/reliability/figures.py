"""The figures the reliability tests measure, and their section at the end of the run.

Tests add them through the `figures` fixture (conftest.py). Under pytest-xdist each worker
records its own and hands them over when it finishes (conftest.py's pytest_sessionfinish);
the controller, which runs no test, merges them as each worker goes down and prints them
(tests/conftest.py), so a run on every core shows the figures of every test it ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest

FULL = os.environ.get("LAZY_RELIABILITY", "").strip().lower() == "full"
WORKER_OUTPUT = "lazy_reliability_figures"
"""The key of a worker's figures in what it hands to the controller."""


@dataclass
class Figures:
    """What the suite measured, one line per figure, grouped under a heading."""

    lines: dict[str, list[str]] = field(default_factory=dict)

    def add(self, heading: str, line: str) -> None:
        """Record one figure (a readable line such as `sqlite: 50/50 trials clean`)."""
        self.lines.setdefault(heading, []).append(line)

    def merge(self, lines: dict[str, list[str]]) -> None:
        """Add another process's figures, heading by heading."""
        for heading, more in lines.items():
            self.lines.setdefault(heading, []).extend(more)


FIGURES = Figures()
"""This process's figures: a worker's own, or in the controller those of every worker."""


def write_figures(terminalreporter: pytest.TerminalReporter) -> None:
    """The section of every figure recorded, under one heading per topic; none if none."""
    if not FIGURES.lines:
        return
    run = "full" if FULL else "fast subset; LAZY_RELIABILITY=full for the full run"
    terminalreporter.section(f"reliability figures ({run})")
    for heading, lines in FIGURES.lines.items():
        terminalreporter.write_line(f"{heading}:")
        for line in lines:
            terminalreporter.write_line(f"  {line}")


@dataclass(frozen=True)
class Scale:
    """How big this run is: `pick(fast, full)` gives the size for the current run."""

    full: bool

    @property
    def name(self) -> str:
        """`full` or `fast`, as the figures report it."""
        return "full" if self.full else "fast"

    def pick(self, fast: int, full: int) -> int:
        """fast on the subset CI runs on every change, full on a full run."""
        return full if self.full else fast
