"""A bounded CPU load beside a measurement: what users feel is timed on a busy machine too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


def busy_cores(seconds: float) -> AbstractContextManager[None]:
    """Every core kept busy by a CPU loop of its own, meanwhile (see busy_loops)."""
    return busy_loops(os.cpu_count() or 2, seconds)


@contextmanager
def busy_loops(count: int, seconds: float) -> Iterator[None]:
    """count CPU loops (a Python process each) running meanwhile.

    Each loop also ends itself after seconds, so none outlives a run that is killed (a loop
    under `timeout` does when `timeout` is killed: its child keeps running).
    """
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    loops = [
        subprocess.Popen([sys.executable, "-c", loop], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        if loops:
            time.sleep(0.5)  # let them take the cores
        yield
    finally:
        for each in loops:
            each.kill()
            each.wait()
