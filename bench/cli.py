"""`lazy memory list` and `show` as a user runs them: whole processes, start to exit.

The floor is the cheapest Python process that can read SQLite: `python -c "import sqlite3"`
with the same interpreter. The helpers that time a whole process serve the launch path too
(bench/launch.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

from bench.client import lazy_command
from bench.corpus import realistic_records
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store

_FLOOR_COMMAND = [sys.executable, "-c", "import sqlite3"]

FLOOR_WHAT = 'python -c "import sqlite3", median'
"""The floor of every whole-process row."""

_TARGETS = {1_000: Target(3, times_floor=True)}


def floor_ms(plan: Plan) -> float:
    """The median wall time of `python -c "import sqlite3"`."""
    return median(wall_times(plan, _FLOOR_COMMAND, os.environ))


def floor_run() -> float:
    """The milliseconds of one run of `python -c "import sqlite3"`."""
    return timed_run(_FLOOR_COMMAND, os.environ)[0]


def commands(plan: Plan, store: Store, floor: float) -> list[Measurement]:
    """`lazy memory list` and `lazy memory show NAME` on store: the median wall time of each."""
    name = realistic_records(store.records)[0].name
    return [
        whole_process(
            f"lazy memory {arguments[0]}",
            store,
            wall_times(plan, [*lazy_command(), "memory", *arguments], store.environment(), store),
            floor,
            _TARGETS.get(store.records),
        )
        for arguments in (["list"], ["show", name])
    ]


def whole_process(
    what: str, store: Store, samples: Sequence[float], floor: float, target: Target | None
) -> Measurement:
    """The row of a whole process's wall times on store: their median, against the floor."""
    return Measurement(
        f"{what}, whole process, median",
        store.backend,
        store.records,
        median(samples),
        "ms",
        floor=floor,
        floor_what=FLOOR_WHAT,
        target=target,
        samples=len(samples),
    )


def wall_times(
    plan: Plan, command: list[str], environment: Mapping[str, str], store: Store | None = None
) -> list[float]:
    """Milliseconds from start to exit of each of plan.repeat runs, after one untimed run."""
    return [timed_run(command, environment, store)[0] for _ in range(plan.repeat + 1)][1:]


def paired_wall_times(
    plan: Plan, command: list[str], environment: Mapping[str, str], store: Store | None = None
) -> tuple[list[float], list[float]]:
    """wall_times of command, each timed run followed by a timed floor_run: both lists."""
    timed_run(command, environment, store)
    pairs = [(timed_run(command, environment, store)[0], floor_run()) for _ in range(plan.repeat)]
    return [run for run, _ in pairs], [floor for _, floor in pairs]


def timed_run(
    command: list[str], environment: Mapping[str, str], store: Store | None = None
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """One run of command (in the store's root, if any) to its exit: the milliseconds it took
    and what it printed; a failure raises."""
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=None if store is None else store.root,
        env=dict(environment),
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    milliseconds = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode().strip()}")
    return milliseconds, done
