"""The reliability suite's scale (a fast subset by default, the full run on demand) and figures.

`python -m pytest tests/reliability` runs the fast subset CI runs on every change;
`LAZY_RELIABILITY=full python -m pytest tests/reliability` runs every trial at full size.
Each test reports what it measured through the `figures` fixture; the figures are printed
together at the end of the run, so the README can quote them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest

from tests.reliability.boundary_scene import scene  # noqa: F401
from tests.reliability.engines import spawn_engine  # noqa: F401
from tests.reliability.hostile import workspace  # noqa: F401

FULL = os.environ.get("LAZY_RELIABILITY", "").strip().lower() == "full"


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


@dataclass
class Figures:
    """What the suite measured, one line per figure, grouped under a heading."""

    lines: dict[str, list[str]] = field(default_factory=dict)

    def add(self, heading: str, line: str) -> None:
        """Record one figure (a readable line such as `sqlite: 50/50 trials clean`)."""
        self.lines.setdefault(heading, []).append(line)


_FIGURES = Figures()


@pytest.fixture(scope="session")
def scale() -> Scale:
    """The size of this run."""
    return Scale(full=FULL)


@pytest.fixture(scope="session")
def figures() -> Figures:
    """Where tests report their figures; printed at the end of the run."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print every figure the suite recorded, under one heading per topic."""
    if not _FIGURES.lines:
        return
    run = "full" if FULL else "fast subset; LAZY_RELIABILITY=full for the full run"
    terminalreporter.section(f"reliability figures ({run})")
    for heading, lines in _FIGURES.lines.items():
        terminalreporter.write_line(f"{heading}:")
        for line in lines:
            terminalreporter.write_line(f"  {line}")
