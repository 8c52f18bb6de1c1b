"""The reliability suite's scale (a fast subset by default, the full run on demand) and figures.

`python -m pytest tests/reliability` runs the fast subset CI runs on every change;
`LAZY_RELIABILITY=full python -m pytest tests/reliability` runs every trial at full size.
Each test reports what it measured through the `figures` fixture; the figures are printed
together at the end of the run, so the README can quote them (tests/reliability/figures.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.reliability.boundary_scene import scene  # noqa: F401
from tests.reliability.engines import spawn_engine  # noqa: F401
from tests.reliability.figures import FIGURES, FULL, WORKER_OUTPUT, Figures
from tests.reliability.hostile import workspace  # noqa: F401


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


@pytest.fixture(scope="session")
def scale() -> Scale:
    """The size of this run."""
    return Scale(full=FULL)


@pytest.fixture(scope="session")
def figures() -> Figures:
    """Where tests report their figures; printed at the end of the run."""
    return FIGURES


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand the figures to the controller, which prints them."""
    handed = getattr(session.config, "workeroutput", None)
    if handed is not None:
        handed[WORKER_OUTPUT] = FIGURES.lines
