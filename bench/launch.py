"""The launch path: what every session start pays, and what a launch's section costs to render.

- The SessionStart hook, `lazy memory context --hook` as Claude Code runs it (in the store's
  root, with its environment), as a whole process, for a builder and for an agent
  (`LAZY_TASK_ID` set), in two states: warm (an untimed run, then the timed ones, which on
  SQLite and files show the section the first one kept, adapters/launch/cache.py) and right
  after a write (before each timed run, one untimed save through a `lazy engine` kept
  connected to the same store, so every timed hook reads the store again). The floor is
  `python -c "import sqlite3"` run beside it pair by pair: each timed hook is followed by a
  timed floor, and the row's floor is the median of those, so a machine whose pace drifts
  moves both alike. The targets (issue 29: 2.5 x the floor at 1,000 records, 3 x at 10,000)
  are the SQLite and files stores'; PostgreSQL and remote stores read through the engine.
- `lazy launch claude --print-command`: the launcher's own work (it renders the whole
  section into its file, without starting Claude Code).
- The engine's `lazy/memory/context` (builder) right after a write: on one warm engine, an
  untimed save then the timed context, in turn. The floor is a no-op round trip to the same
  engine. These rows, one per size, are the render cost's curve; the growth row says whether
  it grows linearly at worst.

What writes gets a copy of the store. Each after-write measurement first checks, untimed,
that what it times lists the record just saved, so neither can quietly time a stale section.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from bench import cli
from bench.client import connected, lazy_command, no_op, result, timings
from bench.corpus import realistic_records
from bench.engine import request_row
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store, copy_store
from tests.support.jsonrpc import RawClient

HOOK = ["memory", "context", "--hook"]
"""The SessionStart hook's arguments to `lazy`, as `lazy init --claude-code` installs it."""

ROLES = {"builder": {}, "agent": {"LAZY_TASK_ID": "bench-agent"}}
"""Each role's hook, by what its session's environment adds: an agent has a task id."""

CONTEXT_AFTER_WRITE = "lazy/memory/context after a write, p50"

GROWTH_LIMIT = 1.25
"""The growth row's target: 1 is linear, and a loaded machine's noise gets a quarter more."""

_HOOK_TARGETS = {1_000: Target(2.5, times_floor=True), 10_000: Target(3, times_floor=True)}
"""Issue 29's targets for the hook, warm and right after a write, builder and agent alike."""
_LIGHT_BACKENDS = ("sqlite", "files")
"""The backends the targets are for: the hook reads their stores without the engine."""
_PAIRED_FLOOR = 'python -c "import sqlite3", median of the runs paired with the timed ones'
"""The floor of the hook's rows: each timed hook, then one of these."""
_CONTEXT_TARGETS = {1_000: Target(3), 10_000: Target(30)}
_BUILDER = {"role": "builder"}
_SEED = 20
"""The saved records' seed: another corpus than the store's, so some names update a record."""


class Writer:
    """A `lazy engine` connected to a store, saving the next realistic record at each call."""

    def __init__(self, client: RawClient, count: int) -> None:
        self.client = client
        # Bodies of this writer's own: a PostgreSQL store is shared by every writer of a run.
        self._params = _records(count, os.urandom(4).hex())

    async def save(self, user: bool = False) -> str:
        """Save the next record (with user, the next `user` one: a fitted section lists those
        first) and give its name; raise if the store was not written."""
        users = [n for n, params in enumerate(self._params) if params["type"] == "user"]
        params = self._params.pop(users[0] if user and users else 0)
        answer = await result(self.client, "lazy/memory/save", params)
        if answer.get("unchanged"):
            raise RuntimeError(f"saving {params['name']!r} wrote nothing: it is the live revision")
        name: str = params["name"]
        return name


@asynccontextmanager
async def writing(plan: Plan, store: Store, count: int) -> AsyncIterator[Writer]:
    """A writer of up to count records to store, through an engine of its own."""
    async with connected([*lazy_command(), "engine"], store.environment(), plan.stderr) as client:
        yield Writer(client, count)


async def launch_path(plan: Plan, corpus: Store, floor: float) -> list[Measurement]:
    """The hook warm and after a write for each role, the launcher, and the context after a
    write, on corpus (the warm hooks and the launcher) and on a copy of it (what writes);
    floor is the sqlite3 floor's median, for the launcher (the hooks pair their own)."""
    hook = [*lazy_command(), *HOOK]
    rows = []
    for role, session in ROLES.items():
        hooks, floors = cli.paired_wall_times(plan, hook, corpus.environment(**session), corpus)
        rows.append(_hook_row(f"lazy memory context --hook, {role}, warm", corpus, hooks, floors))
    rows.append(_launcher(plan, corpus, floor))
    store = copy_store(corpus, plan.workdir, "launch")
    # Saves: each role's check and timed hooks, the context's check, warm-up and timed
    # requests (timings() makes at least three).
    saves = len(ROLES) * (1 + plan.repeat) + 2 + max(plan.requests, 3)
    async with writing(plan, store, saves) as writer:
        for role, session in ROLES.items():
            rows.append(await _hook_after_writes(plan, writer, store, role, session))
        rows.append(await _context_after_writes(plan, writer, store))
    return rows


def growth(measurements: Sequence[Measurement], backend: str) -> list[Measurement]:
    """How the after-write context's p50 grows from the smallest store to the largest, over
    how the records grow: at most 1 is linear or better (none with a single size)."""
    curve = sorted(
        (m for m in measurements if m.what == CONTEXT_AFTER_WRITE and m.backend == backend),
        key=lambda m: m.records,
    )
    if len(curve) < 2:
        return []
    smallest, largest = curve[0], curve[-1]
    return [
        Measurement(
            f"context after a write: cost growth / records growth from {smallest.records:,}",
            backend,
            largest.records,
            (largest.value / smallest.value) / (largest.records / smallest.records),
            "x",
            target=Target(GROWTH_LIMIT),
            note=f"render cost linear at worst: the after-write context p50's growth from "
            f"{smallest.records:,} records over the records' growth; 1 is linear, below is "
            f"better, and the target allows {GROWTH_LIMIT} for a loaded machine's noise",
        )
    ]


def _check_lists(text: str, name: str, what: str) -> None:
    """Raise unless text lists the record name (its index line): what was timed rendered."""
    if f"- {name} (" not in text:
        raise RuntimeError(f"{what} right after saving {name!r} does not list it: a stale section")


def _launcher(plan: Plan, store: Store, floor: float) -> Measurement:
    command = [*lazy_command(), "launch", "claude", "--print-command", "--json"]
    # --print-command keeps the section's file for the printed command: in a folder of its own.
    with tempfile.TemporaryDirectory(prefix="lazy-bench-launch-") as prompts:
        samples = cli.wall_times(plan, command, store.environment(TMPDIR=prompts), store)
    return cli.whole_process("lazy launch claude --print-command", store, samples, floor, None)


async def _hook_after_writes(
    plan: Plan, writer: Writer, store: Store, role: str, session: dict[str, str]
) -> Measurement:
    """plan.repeat hooks of role, each right after a save and followed by a floor run, after
    one untimed such run that checks it."""
    hook, environment = [*lazy_command(), *HOOK], store.environment(**session)
    # A `user` record: a section fitted to the hook's limit lists those first.
    name = await writer.save(user=True)
    _, done = cli.timed_run(hook, environment, store)
    _check_lists(done.stdout.decode(), name, f"the {role}'s hook")
    hooks, floors = [], []
    for _ in range(plan.repeat):
        await writer.save()
        hooks.append(cli.timed_run(hook, environment, store)[0])
        floors.append(cli.floor_run())
    return _hook_row(f"lazy memory context --hook, {role}, after a write", store, hooks, floors)


def _hook_row(
    what: str, store: Store, hooks: Sequence[float], floors: Sequence[float]
) -> Measurement:
    """A hook's row: the median of its runs, beside the median of the floor runs paired with
    them; the target for a SQLite or files store of a size issue 29 sets one for."""
    target = _HOOK_TARGETS.get(store.records) if store.backend in _LIGHT_BACKENDS else None
    return Measurement(
        f"{what}, whole process, median",
        store.backend,
        store.records,
        median(hooks),
        "ms",
        floor=median(floors),
        floor_what=_PAIRED_FLOOR,
        target=target,
        samples=len(hooks),
    )


async def _context_after_writes(plan: Plan, writer: Writer, store: Store) -> Measurement:
    """The builder's context, each timed right after an untimed save, paced by timings() (whose
    budget counts the saves too), beside no-op round trips to the same engine."""
    client = writer.client
    no_ops = await timings(partial(no_op, client), plan.requests, plan.budget_seconds)
    name = await writer.save()
    _check_lists((await result(client, "lazy/memory/context", _BUILDER))["text"], name, "context")
    samples: list[float] = []

    async def save_then_context() -> None:
        await writer.save()
        start = time.perf_counter()
        await result(client, "lazy/memory/context", _BUILDER)
        samples.append((time.perf_counter() - start) * 1000)

    await timings(save_then_context, plan.requests, plan.budget_seconds)
    del samples[0]  # timings' untimed warm-up
    return request_row(
        CONTEXT_AFTER_WRITE, store, median(samples), samples, median(no_ops), _CONTEXT_TARGETS
    )


def _records(count: int, writer: str) -> list[dict[str, Any]]:
    """count realistic records' save params.

    A name the store holds is an update; the body's last line, new in each, makes it a write
    even where the corpus has the same record word for word (answered `unchanged` otherwise).
    """
    # More than asked: a save may ask for the next `user` record, a tenth of the corpus.
    records = realistic_records(max(count, 200), _SEED)
    return [
        record.model_dump(mode="json", exclude={"provenance"})
        | {"body": f"{record.body}\n\nSaved by the benchmark's writer {writer}, save {number}."}
        for number, record in enumerate(records, start=1)
    ]
