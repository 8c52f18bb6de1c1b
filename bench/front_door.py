"""The front-door group: clients with tokens served through a crowd of hostile sockets.

`python -m bench --front-door [N]` starts a real `lazy engine --listen` on a TCP port of the
loopback interface with its default limits, over a SQLite store of the realistic corpus
(RECORDS records), and gives each of HOLDERS clients a builder token of its own. Each holder
runs sessions back to back, as a builder at launch does: connect, `initialize` with its
token, `lazy/memory/context`, `shutdown`, `exit`, close. First with nothing else connected
(the floor: the same sessions on an idle daemon, in the same run), then while a crowd of N
hostile sockets (1,000 by default; tests/support/hostile_crowd.py, in a process of its own) is
connected: a third silent, a third trickling a header a byte at a time, a third hanging up
after a moment, every one reconnecting as soon as it is dropped.

The crowd comes FLOODS times, and leaves in between. Targets: every session of every holder
served while it is there; their p99 within TIMES_IDLE times the idle p99; the daemon's
resident memory (VmRSS, sampled throughout) within RSS_PEAK_TIMES of its idle figure; once
the crowd has left, settled, within RSS_AFTER_TIMES of it, and after the second flood no
higher than after the first (what the allocator keeps, a later crowd reuses). The notes say
what the crowd did and what the daemon told it.

Then once more with a quarter as many places to wait as the crowd has sockets
(`max_unauthenticated_connections`), on a new daemon: every place taken, each newcomer drops
the longest waiting, the daemon drops no faster than all of them in 0.1 s and the kernel
queues the rest. Every session must still be served; the p99 is information (the holders
queue behind the crowd). `--quick` shortens each phase (the smoke test's run).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.plan import Plan
from bench.report import Measurement, Target, percentile
from bench.stores import Store, build_store
from tests.support.daemon import Daemon, add_token, rss_kib, running_daemon, settled_rss
from tests.support.hostile_crowd import opener
from tests.support.jsonrpc import RawClient

CROWD = 1_000
HOLDERS = 8
RECORDS = 300
TIMES_IDLE = 10
RSS_PEAK_TIMES = 1.5
RSS_AFTER_TIMES = 1.25
RSS_AGAIN_TIMES = 1.05
FLOODS = 2
SESSION_TIMEOUT_SECONDS = 30.0
PAUSE_BETWEEN_SESSIONS_SECONDS = 0.02


@dataclass(frozen=True)
class Phases:
    """How long each part of the run lasts, in seconds."""

    idle: float
    crowd_gathers: float
    flood: float


FULL = Phases(idle=20.0, crowd_gathers=5.0, flood=20.0)
QUICK = Phases(idle=3.0, crowd_gathers=2.0, flood=5.0)
_SESSION = "session (connect, initialize, context, close)"
_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Sessions:
    """The holders' sessions of one phase: each served one's seconds, each failure's why."""

    seconds: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)

    @property
    def attempted(self) -> int:
        """Every session started."""
        return len(self.seconds) + self.failures.total()


def measure(plan: Plan, crowd: int = CROWD, quick: bool = False) -> list[Measurement]:
    """The group's rows: the idle floor, then the flood, on one daemon."""
    return asyncio.run(_measure(plan, crowd, QUICK if quick else FULL))


async def _measure(plan: Plan, crowd: int, phases: Phases) -> list[Measurement]:
    store = await build_store("sqlite", RECORDS, plan.workdir)
    tokens = [add_token(store.data_dir, "builder", f"holder-{n}") for n in range(HOLDERS)]
    with running_daemon(
        store.data_dir, "tcp:127.0.0.1:0", cwd=store.root, environment=store.environment()
    ) as daemon:
        _progress(f"{HOLDERS} token holders on an idle daemon, {phases.idle:g} s")
        idle = await _holders(daemon, tokens, phases.idle)
        idle_rss = await settled_rss(daemon)
        peak = _Peak(daemon)
        sampling = asyncio.ensure_future(peak.sample())
        flood, tally, after_rss = Sessions(), Counter[str](), []
        for number in range(1, FLOODS + 1):
            tally += await _flood(daemon, tokens, crowd, phases, flood, f"flood {number}")
            _progress(f"flood {number}: the crowd has left, the daemon's memory settles")
            after_rss.append(await settled_rss(daemon))
        sampling.cancel()
    rows = _rows(crowd, store, idle, flood, (idle_rss, peak.kib, *after_rss), tally)
    # Fewer places than the crowd: every place is taken, each newcomer drops the longest
    # waiting, and the daemon drops no faster than all of them in 0.1 s.
    places = max(1, crowd // 4)
    (store.root / "lazy.toml").write_text(
        f"[engine]\nmax_unauthenticated_connections = {places}\n", encoding="utf-8"
    )
    with running_daemon(
        store.data_dir, "tcp:127.0.0.1:0", cwd=store.root, environment=store.environment()
    ) as daemon:
        crowded = Sessions()
        tally = await _flood(daemon, tokens, crowd, phases, crowded, f"{places} places")
    return rows + _crowded_rows(crowd, places, store, idle, crowded, tally)


async def _flood(
    daemon: Daemon,
    tokens: Sequence[str],
    crowd: int,
    phases: Phases,
    sessions: Sessions,
    label: str,
) -> Counter[str]:
    """The holders' sessions while a crowd is there (added to sessions); its tally."""
    _progress(f"{label}: {crowd:,} hostile sockets gather, {phases.crowd_gathers:g} s")
    process = _start_crowd(daemon, crowd)
    try:
        await asyncio.sleep(phases.crowd_gathers)
        _progress(f"{label}: {HOLDERS} token holders through the crowd, {phases.flood:g} s")
        await _holders(daemon, tokens, phases.flood, sessions)
        return await _stop_crowd(process)
    finally:
        if process.returncode is None:
            process.kill()


def _rows(
    crowd: int,
    store: Store,
    idle: Sessions,
    flood: Sessions,
    rss: tuple[int, ...],
    tally: Counter[str],
) -> list[Measurement]:
    """The rows, from the sessions and the VmRSS (KiB: idle, peak, after each flood)."""
    idle_rss, peak_rss, after_first, after_last = rss[0], rss[1], rss[2], rss[-1]
    label = f"{crowd:,} hostile sockets"
    idle_floor = _idle_floor(idle)
    crowd_note = _note(f"{label}, {FLOODS} times", flood, tally)
    rss_floor = "the daemon's VmRSS after the idle sessions, settled"
    return [
        _served_row(label, store, flood, crowd_note),
        _p99_row(label, store, idle, flood, Target(TIMES_IDLE, times_floor=True)),
        Measurement(
            f"token holders' {_SESSION}, p50, {label}",
            store.backend,
            store.records,
            _ms(flood.seconds, 0.5),
            "ms",
            floor=_ms(idle.seconds, 0.5),
            floor_what=idle_floor + ", p50",
            samples=len(flood.seconds),
        ),
        _rss_row(f"daemon's VmRSS, peak, {label}", store, peak_rss, idle_rss, rss_floor),
        _rss_row(
            f"daemon's VmRSS once the {label} have left, settled",
            store,
            after_first,
            idle_rss,
            rss_floor,
            RSS_AFTER_TIMES,
        ),
        _rss_row(
            f"daemon's VmRSS once the {label} have left again, settled",
            store,
            after_last,
            after_first,
            "the same after the first flood",
            RSS_AGAIN_TIMES,
        ),
    ]


def _crowded_rows(
    crowd: int, places: int, store: Store, idle: Sessions, crowded: Sessions, tally: Counter[str]
) -> list[Measurement]:
    """The rows of the run with fewer places to wait than the crowd: served, and the p99
    (information: the holders queue behind the crowd in the kernel)."""
    label = f"{crowd:,} hostile sockets, {places:,} places to wait"
    note = _note(label, crowded, tally)
    return [
        _served_row(label, store, crowded, note),
        _p99_row(label, store, idle, crowded, None),
    ]


def _served_row(label: str, store: Store, sessions: Sessions, note: str) -> Measurement:
    """How many of the holders' sessions were served (target: every one)."""
    return Measurement(
        f"token holders' sessions served, {label}",
        store.backend,
        store.records,
        len(sessions.seconds),
        "sessions",
        target=Target(sessions.attempted, at_least=True),
        samples=sessions.attempted,
        note=note,
    )


def _p99_row(
    label: str, store: Store, idle: Sessions, sessions: Sessions, target: Target | None
) -> Measurement:
    """The p99 of the holders' sessions, against the idle daemon's."""
    return Measurement(
        f"token holders' {_SESSION}, p99, {label}",
        store.backend,
        store.records,
        _ms(sessions.seconds, 0.99),
        "ms",
        floor=_ms(idle.seconds, 0.99),
        floor_what=_idle_floor(idle) + ", p99",
        target=target,
        samples=len(sessions.seconds),
    )


def _ms(seconds: Sequence[float], share: float) -> float:
    return percentile(seconds, share) * 1000 if seconds else float("inf")


def _idle_floor(idle: Sessions) -> str:
    return f"the same sessions on the idle daemon, before the crowd ({len(idle.seconds)})"


def _note(label: str, sessions: Sessions, tally: Counter[str]) -> str:
    """What the holders tried and what failed, what the crowd did and was told."""
    failed = ", ".join(f"{why} ({count})" for why, count in sessions.failures.most_common())
    return (
        f"{label}: {HOLDERS} holders tried {sessions.attempted} sessions"
        + (f"; failed: {failed}" if failed else "")
        + f"; the crowd connected {tally['connects']:,} times, the daemon closed "
        f"{tally['dropped']:,} of them, {tally['told_why']:,} told why first"
    )


def _rss_row(
    what: str,
    store: Store,
    kib: int,
    floor_kib: int,
    floor_what: str,
    times: float = RSS_PEAK_TIMES,
) -> Measurement:
    """A row of the daemon's VmRSS (KiB in, MiB out), at most times its floor."""
    return Measurement(
        what,
        store.backend,
        store.records,
        kib / 1024,
        "MiB",
        floor=floor_kib / 1024,
        floor_what=floor_what,
        target=Target(times, times_floor=True),
    )


async def _holders(
    daemon: Daemon, tokens: Sequence[str], seconds: float, sessions: Sessions | None = None
) -> Sessions:
    """Every holder's sessions, back to back, for seconds (added to sessions, if given)."""
    sessions = Sessions() if sessions is None else sessions
    until = time.monotonic() + seconds

    async def holder(token: str) -> None:
        while time.monotonic() < until:
            await _session(daemon, token, sessions)
            await asyncio.sleep(PAUSE_BETWEEN_SESSIONS_SECONDS)

    await asyncio.gather(*(holder(token) for token in tokens))
    return sessions


async def _session(daemon: Daemon, token: str, sessions: Sessions) -> None:
    """One session, timed from connecting to closing; a failure is counted with its why."""
    started = time.perf_counter()
    client: RawClient | None = None
    try:
        async with asyncio.timeout(SESSION_TIMEOUT_SECONDS):
            client = RawClient(*await opener(daemon.address)())
            initialized = await client.initialize({"token": token})
            if "error" in initialized:
                sessions.failures[f"initialize: {initialized['error']['message']}"] += 1
                return
            context = await client.request("lazy/memory/context", {"role": "builder"})
            if "error" in context:
                sessions.failures[f"context: {context['error']['message']}"] += 1
                return
            await client.close()
    except (OSError, TimeoutError) as error:
        farewell = _farewell(client)
        sessions.failures[farewell or type(error).__name__] += 1
        return
    finally:
        if client is not None:
            client.writer.transport.abort()
    sessions.seconds.append(time.perf_counter() - started)


def _farewell(client: RawClient | None) -> str:
    """What the daemon said as it closed client's connection, if it said anything."""
    while client is not None and not client.unsolicited.empty():
        message = client.unsolicited.get_nowait()
        if "error" in message:
            return f"closed: {message['error']['message']}"
    return ""


class _Peak:
    """The daemon's highest VmRSS seen, sampled four times a second."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.kib = rss_kib(daemon)

    async def sample(self) -> None:
        """Sample until cancelled."""
        while True:
            self.kib = max(self.kib, rss_kib(self.daemon))
            await asyncio.sleep(0.25)


def _start_crowd(daemon: Daemon, crowd: int) -> subprocess.Popen[str]:
    third = crowd // 3
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.hostile_crowd",
            daemon.address,
            *("--silent", str(third), "--trickling", str(third)),
            *("--reconnecting", str(crowd - 2 * third), "--seconds", "600"),
        ],
        cwd=_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(_ROOT)},
    )


async def _stop_crowd(process: subprocess.Popen[str]) -> Counter[str]:
    """Send the crowd away; its tally."""
    process.terminate()
    output, _ = await asyncio.to_thread(process.communicate, timeout=60)
    return Counter(json.loads(output.splitlines()[-1]) if output.strip() else {})


def _progress(message: str) -> None:
    print(f"bench: front door: {message}", file=sys.stderr, flush=True)
