"""The resident memory of processes over time, read from /proc/PID/status every interval."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1024 * 1024


@dataclass
class RssSeries:
    """One process's VmRSS samples: (seconds since sampling began, bytes)."""

    pid: int
    samples: list[tuple[float, int]] = field(default_factory=list)

    def after(self, seconds: float) -> list[int]:
        """The samples taken once seconds had passed (the ones after warm-up)."""
        return [rss for at, rss in self.samples if at >= seconds]

    def start_and_end(self, warm_up: float, window: int = 5) -> tuple[int, int]:
        """RSS just after warm-up and at the end: the median of window samples at each end.

        Medians, so one sample caught mid-request (a big response being built) moves neither.
        """
        settled = self.after(warm_up)
        if len(settled) < 2 * window:
            raise ValueError(f"only {len(settled)} samples after warm-up; need {2 * window}")
        return int(statistics.median(settled[:window])), int(statistics.median(settled[-window:]))


def resident_bytes(pid: int) -> int | None:
    """The process's VmRSS in bytes, None once it has exited."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


async def sample_rss(series: list[RssSeries], interval: float, until: asyncio.Event) -> None:
    """Append a sample to every series each interval until the event is set."""
    began = time.monotonic()
    while not until.is_set():
        for one in series:
            rss = resident_bytes(one.pid)
            if rss is not None:
                one.samples.append((time.monotonic() - began, rss))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(until.wait(), interval)


def mib(size: int) -> str:
    """A size in MiB, for the figures."""
    return f"{size / MIB:.1f} MiB"
