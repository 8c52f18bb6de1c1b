"""A one-line progress bar on standard error for the CLI's long operations."""

from __future__ import annotations

import sys

PROGRESS_FROM = 50
"""Show a progress bar for operations of at least this many steps."""


class ProgressPrinter:
    """Redraws `label [####------] done/total` on stderr; silent for short operations."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_FROM:
            return
        width = 30
        filled = width * done // total
        end = "\n" if done == total else ""
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r{self.label} [{bar}] {done}/{total}", end=end, file=sys.stderr, flush=True)
