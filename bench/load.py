"""A bounded CPU load beside a measurement: what users feel is timed on a busy machine too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def busy_cores(seconds: float) -> Iterator[None]:
    """Every core kept busy by a CPU loop of its own, meanwhile.

    Each loop also ends itself after seconds, so none outlives a run that is killed (a loop
    under `timeout` does when `timeout` is killed: its child keeps running).
    """
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    loops = [
        subprocess.Popen([sys.executable, "-c", loop], stdin=subprocess.DEVNULL)
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        time.sleep(0.5)  # let them take the cores
        yield
    finally:
        for each in loops:
            each.kill()
            each.wait()
