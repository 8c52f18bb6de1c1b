"""The reliability figures are printed once at the end of a run, whether its tests ran in the
one process or on pytest-xdist's workers (tests/reliability/figures.py).

Each case runs the query parser's and the front-matter reader's tests, which record a figure
each, in a pytest of its own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
RECORDING = "tests/reliability/test_hostile_parsers.py"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_every_figure_is_printed_once_however_many_workers_ran_the_tests(workers: str) -> None:
    finished = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"),
            *("-n", workers, "--dist", "load", RECORDING),
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    assert finished.stdout.count("reliability figures (fast subset") == 1, finished.stdout
    assert finished.stdout.count("\nhostile input:\n") == 1
    assert finished.stdout.count("  query parser: ") == 1
    assert finished.stdout.count("  front-matter reader: ") == 1
