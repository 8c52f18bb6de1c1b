"""The first-turn group's second half: does a session's first model request offer lazy's tools?

The real Claude Code (`$LAZY_CLAUDE`, else `claude` on PATH) runs offline against the tests'
fake Messages API (tests/support/fake_anthropic.py), in a repository set up by `lazy init
--claude-code` (run as a user runs it: no flag, no terminal) on a 300-record store of the
realistic corpus, with nothing else set: what a user gets. It starts N sessions (20 by
default) each way, `claude -p hello` (the hook) and `lazy launch claude -- -p hello`, in
turn, first on the machine as it is, then with every core kept busy (one CPU loop per core
beside it, bench/load.py, stopped after the last session).
One untimed session of each way comes first, so the first counted one does not pay for
cold caches. Each session has a fresh Claude Code state (config folder and HOME).

For each way and load it reports how many sessions' first request offered lazy's tools with
the schemas `lazy mcp` declares (tests/e2e/claude_code/first_request.py; the note says what
the others got instead: deferred behind ToolSearch, still connecting, ...) and how many held
exactly one instruction about memory (lazy's section, and not Claude Code's auto memory): the
target of both is every session. Then the time from starting the session to its first
request, p50 and max (info; the note lists every session's). Nothing here has a floor: the
time is Claude Code's own start-up, and the counts are what the issue targets.

Without Claude Code every row is `missing`, with the reason.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

from bench.client import lazy_command
from bench.load import busy_cores
from bench.plan import Plan
from bench.report import Measurement, Target, median, missing
from bench.stores import Store, build_store
from tests.e2e.claude_code.first_request import (
    LAZY_SECTION,
    OFFERED,
    declared_tools,
    lazy_tools_offer,
    memory_instructions,
)
from tests.e2e.claude_code.harness import (
    INSTALL_HINT,
    ClaudeCode,
    claude_version,
    locate_claude,
)
from tests.e2e.claude_code.lazy_project import lazy_server, preamble
from tests.support.anthropic_messages import Received
from tests.support.fake_anthropic import FakeAnthropic

SESSIONS = 20
"""Sessions of each way and load, unless --first-turn says otherwise."""
RECORDS = 300
"""The store's size: a realistic one, whose index does not fit the hook's 10,000 characters."""
WAYS = ("claude -p", "lazy launch claude")
LOADS = ("no load added", "every core busy")
OFFERED_WHAT = "first request offered lazy's tools with schemas"
ONE_INSTRUCTION_WHAT = "first request held one memory instruction"
_PROMPT = "hello"
_SESSION_TIMEOUT_SECONDS = 120.0
_NOT_STARTED = "the session ended before its first request"


@dataclass(frozen=True)
class Session:
    """What one session's first request showed, and when it came."""

    offer: str
    """OFFERED, or what the request did with lazy's tools instead."""
    one_instruction: bool
    seconds: float | None
    """From starting the session to its first request; None if it never sent one."""
    instructions: tuple[str, ...] = ()


def unavailable() -> str:
    """Why this group cannot run here ("" when it can): Claude Code is not installed."""
    binary = locate_claude()
    if binary is None or not Path(binary).exists():
        return INSTALL_HINT
    return ""


def measure(plan: Plan, sessions: int = SESSIONS) -> list[Measurement]:
    """Every way and load, sessions times each; `missing` rows when Claude Code is not here."""
    binary = locate_claude()
    reason = unavailable()
    if reason or binary is None:
        return [
            missing(f"{way}, {load}: {OFFERED_WHAT}", "Claude Code", RECORDS, reason)
            for load in LOADS
            for way in WAYS
        ]
    store = asyncio.run(build_store("sqlite", RECORDS, plan.workdir))
    subprocess.run(
        [*lazy_command(), "init", "--claude-code"],
        cwd=store.root,
        env=store.environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
    )
    backend = f"Claude Code {claude_version(binary)}"
    rows: list[Measurement] = []
    with FakeAnthropic() as api:
        runner = _Runner(binary, api, store, plan.workdir / "claude-states")
        for way in WAYS:
            runner.session(way)  # untimed: warms the caches a first session would pay for
        for load in LOADS:
            _progress(f"{load}: {sessions} sessions each way, in turn")
            started_at_load = os.getloadavg()[0]
            found: dict[str, list[Session]] = {way: [] for way in WAYS}
            with _load(load, sessions):
                for number in range(sessions):
                    for way in WAYS:
                        found[way].append(runner.session(way))
                        _progress(f"{load}, {way}, {number + 1}/{sessions}: {found[way][-1].offer}")
            for way in WAYS:
                rows += series_rows(f"{way}, {load}", backend, found[way], started_at_load)
    return rows


def series_rows(
    label: str, backend: str, sessions: Sequence[Session], load_average: float
) -> list[Measurement]:
    """The rows of one way and load (the machine's load_average at its start): the two counts
    (target: every session) and the times."""
    count = len(sessions)
    everyone = Target(count, at_least=True)
    offered = [session.offer == OFFERED for session in sessions]
    single = [session.one_instruction for session in sessions]
    others = Counter(session.offer for session in sessions if session.offer != OFFERED)
    extra = Counter(
        " + ".join(session.instructions) or "none"
        for session in sessions
        if not session.one_instruction and session.offer != _NOT_STARTED
    )
    times = [session.seconds for session in sessions if session.seconds is not None]
    rows = [
        Measurement(
            f"{label}: {OFFERED_WHAT}",
            backend,
            RECORDS,
            sum(offered),
            "sessions",
            target=everyone,
            samples=count,
            note=f"{label}: load average {load_average:.2f} at the start"
            + _tally("; the others", others),
        ),
        Measurement(
            f"{label}: {ONE_INSTRUCTION_WHAT}",
            backend,
            RECORDS,
            sum(single),
            "sessions",
            target=everyone,
            samples=count,
            note=_tally(f"{label}: the others held", extra),
        ),
    ]
    if times:
        listed = " ".join(f"{seconds:.1f}" for seconds in times)
        rows += [
            Measurement(
                f"{label}: time to first request, p50",
                backend,
                RECORDS,
                median(times),
                "s",
                samples=len(times),
                note=f"{label}, every session in order (s): {listed}",
            ),
            Measurement(
                f"{label}: time to first request, max",
                backend,
                RECORDS,
                max(times),
                "s",
                samples=len(times),
            ),
        ]
    return rows


def _tally(prefix: str, counts: Counter[str]) -> str:
    """prefix and each of counts with its count, most first; "" when counts is empty."""
    if not counts:
        return ""
    return f"{prefix}: " + ", ".join(f"{what} ({number})" for what, number in counts.most_common())


class _Runner:
    """Starts sessions in the store's repository and reads what their first request held."""

    def __init__(self, binary: str, api: FakeAnthropic, store: Store, states: Path) -> None:
        self._binary = binary
        self._api = api
        self._root = store.root
        # The store's LAZY_* variables, and nothing else a user would not set.
        self._environment = {
            name: value for name, value in store.environment().items() if name.startswith("LAZY_")
        }
        self._states = states
        self._started = 0
        self._declared = declared_tools(lazy_server(store.root), store.root, store.environment())
        self._preamble = preamble(store.root, **self._environment)

    def session(self, way: str) -> Session:
        """One session started the way named, to its end."""
        self._started += 1
        claude_code = ClaudeCode(self._binary, self._api, self._states / str(self._started))
        arrived: list[float] = []

        def reply(request: Received) -> str:
            if not arrived:
                arrived.append(time.perf_counter())
            return "done"

        self._api.script(reply)
        before = len(self._api.message_requests)
        if way == WAYS[0]:
            command = [self._binary, "-p", _PROMPT]
        else:
            claude = ["--claude", self._binary, "--", "-p", _PROMPT]
            command = [*lazy_command(), "launch", "claude", *claude]
        started = time.perf_counter()
        # Killed past its timeout (AssertionError), it is judged like any other by what it sent.
        with suppress(AssertionError):
            claude_code.run_command(
                command, cwd=self._root, env=self._environment, timeout=_SESSION_TIMEOUT_SECONDS
            )
        requests = self._api.message_requests[before:]
        if not requests:
            return Session(_NOT_STARTED, False, None)
        body = requests[0].body
        instructions = tuple(memory_instructions(body, self._preamble))
        return Session(
            lazy_tools_offer(body, self._declared),
            instructions == (LAZY_SECTION,),
            arrived[0] - started if arrived else None,
            instructions,
        )


def _load(load: str, sessions: int) -> AbstractContextManager[None]:
    """The machine as it is, or every core kept busy for as long as sessions take at most."""
    if load == LOADS[0]:
        return nullcontext()
    return busy_cores(_SESSION_TIMEOUT_SECONDS * sessions * len(WAYS))


def _progress(message: str) -> None:
    print(f"bench: first request: {message}", file=sys.stderr, flush=True)
