"""`lazy memory list` and `show` as a user runs them: whole processes, start to exit.

The floor is the cheapest Python process that can read SQLite: `python -c "import sqlite3"`
with the same interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping

from bench.client import lazy_command
from bench.corpus import realistic_records
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store

_FLOOR_COMMAND = [sys.executable, "-c", "import sqlite3"]

_TARGETS = {1_000: Target(3, times_floor=True)}
_LAUNCH_TARGETS = {1_000: Target(2.5, times_floor=True)}
"""The SessionStart hook runs on every session start (issue 20's launch-path target)."""


def floor_ms(plan: Plan) -> float:
    """The median wall time of `python -c "import sqlite3"`."""
    return median(_wall_times(plan, _FLOOR_COMMAND, os.environ))


def commands(plan: Plan, store: Store, floor: float) -> list[Measurement]:
    """`lazy memory list` and `lazy memory show NAME` on store: the median wall time of each."""
    name = realistic_records(store.records)[0].name
    return [
        _whole_process(
            plan,
            store,
            floor,
            f"lazy memory {arguments[0]}",
            [*lazy_command(), "memory", *arguments],
            _TARGETS.get(store.records),
        )
        for arguments in (["list"], ["show", name])
    ]


def launch_commands(plan: Plan, store: Store, floor: float) -> list[Measurement]:
    """What every launch pays, as whole processes: the SessionStart hook and the launcher.

    `lazy memory context --hook` as Claude Code runs it, and `lazy launch claude
    --print-command` (the launcher's own work: rendering the whole section into its file,
    without starting Claude Code).
    """
    import tempfile

    hook = [*lazy_command(), "memory", "context", "--hook"]
    launcher = [*lazy_command(), "launch", "claude", "--print-command", "--json"]
    # --print-command keeps the section's file for the printed command: in a folder of its own.
    with tempfile.TemporaryDirectory(prefix="lazy-bench-launch-") as prompts:
        return [
            _whole_process(
                plan,
                store,
                floor,
                "SessionStart hook (lazy memory context --hook)",
                hook,
                _LAUNCH_TARGETS.get(store.records),
            ),
            _whole_process(
                plan,
                store,
                floor,
                "lazy launch claude --print-command",
                launcher,
                None,
                TMPDIR=prompts,
            ),
        ]


def _whole_process(
    plan: Plan,
    store: Store,
    floor: float,
    what: str,
    command: list[str],
    target: Target | None,
    **environment: str,
) -> Measurement:
    """The median wall time of command on store, against the sqlite3 floor."""
    samples = _wall_times(plan, command, {**store.environment(), **environment}, store)
    return Measurement(
        f"{what}, whole process, median",
        store.backend,
        store.records,
        median(samples),
        "ms",
        floor=floor,
        floor_what='python -c "import sqlite3", median',
        target=target,
        samples=len(samples),
    )


def _wall_times(
    plan: Plan, command: list[str], environment: Mapping[str, str], store: Store | None = None
) -> list[float]:
    """Milliseconds from start to exit of each of plan.repeat runs, after one untimed run."""
    samples = []
    for _ in range(plan.repeat + 1):
        start = time.perf_counter()
        done = subprocess.run(
            command,
            cwd=None if store is None else store.root,
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
        samples.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode().strip()}")
    return samples[1:]
