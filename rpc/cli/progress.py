"""Progress on standard error for long CLI operations: a bar on a terminal, lines elsewhere."""

from __future__ import annotations

import sys

PROGRESS_FROM = 50
"""Show progress for operations of at least this many steps."""

PLAIN_STEPS = 10
"""Off a terminal, how many lines an operation prints (one each tenth of the way)."""


class ProgressPrinter:
    """`label [####------] done/total` on stderr; silent for short operations.

    On a terminal the bar is redrawn in place. Anywhere else (a log file, CI, a pipe) a
    carriage return would garble the output, so a plain line is printed each tenth of the way.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self._printed_step = -1

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        if sys.stderr is None:
            return
        if sys.stderr.isatty():
            width = 30
            filled = width * done // total
            end = "\n" if done == total else ""
            bar = "#" * filled + "-" * (width - filled)
            print(f"\r{self.label} [{bar}] {done}/{total}", end=end, file=sys.stderr, flush=True)
            return
        step = PLAIN_STEPS * done // total
        if step > self._printed_step:
            self._printed_step = step
            print(f"{self.label}: {done}/{total}", file=sys.stderr, flush=True)
