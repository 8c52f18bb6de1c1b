"""The launch path: what every session start pays, and what a launch's section costs to render.

- The SessionStart hook, `lazy memory context --hook` as Claude Code runs it (in the store's
  root, with its environment), as a whole process in two states: warm (an untimed run, then
  the timed ones, which on SQLite show the section the first one kept,
  adapters/launch_cache.py) and right after a write (before each timed run, one untimed save
  through a `lazy engine` kept connected to the same store, so every timed hook renders).
  The floor is `python -c "import sqlite3"`.
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
from lazy_memory.engine.records import RecordType
from tests.e2e.jsonrpc import RawClient

HOOK = ["memory", "context", "--hook"]
"""The SessionStart hook's arguments to `lazy`, as `lazy init --claude-code` installs it."""

CONTEXT_AFTER_WRITE = "lazy/memory/context after a write, p50"

GROWTH_LIMIT = 1.25
"""The growth row's target: 1 is linear, and a loaded machine's noise gets a quarter more."""

_HOOK_TARGETS = {1_000: Target(2.5, times_floor=True)}
"""Issue 20's launch-path target, for the warm hook and the one after a write alike."""
_CONTEXT_TARGETS = {1_000: Target(3), 10_000: Target(30)}
_BUILDER = {"role": "builder"}
_SEED = 20
"""The saved records' seed: another corpus than the store's, so some names update a record."""


class Writer:
    """A `lazy engine` connected to a store, saving the next realistic record at each call."""

    def __init__(self, client: RawClient, count: int) -> None:
        self.client = client
        self._params = iter(_records(count))

    async def save(self) -> str:
        """Save the next record and give its name; raise if the store was not written."""
        params = next(self._params)
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
    """The hook warm and after a write, the launcher, and the context after a write, on corpus
    (the warm hook and the launcher) and on a copy of it (what writes); floor is the sqlite3
    floor's median."""
    hook = [*lazy_command(), *HOOK]
    warm = cli.wall_times(plan, hook, corpus.environment(), corpus)
    rows = [
        cli.whole_process(
            "lazy memory context --hook, warm",
            corpus,
            warm,
            floor,
            _HOOK_TARGETS.get(corpus.records),
        ),
        _launcher(plan, corpus, floor),
    ]
    store = copy_store(corpus, plan.workdir, "launch")
    # Saves: the hook's check and timed runs, the context's check, warm-up and timed requests
    # (timings() makes at least three).
    saves = 1 + plan.repeat + 2 + max(plan.requests, 3)
    async with writing(plan, store, saves) as writer:
        rows.append(await _hook_after_writes(plan, writer, store, floor))
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


async def _hook_after_writes(plan: Plan, writer: Writer, store: Store, floor: float) -> Measurement:
    """plan.repeat hooks, each right after a save, after one untimed such run that checks it."""
    hook, environment = [*lazy_command(), *HOOK], store.environment()
    # The first save is a `user` record: a section fitted to the hook's limit lists those first.
    name = await writer.save()
    _, done = cli.timed_run(hook, environment, store)
    _check_lists(done.stdout.decode(), name, "the hook")
    samples = []
    for _ in range(plan.repeat):
        await writer.save()
        samples.append(cli.timed_run(hook, environment, store)[0])
    return cli.whole_process(
        "lazy memory context --hook, after a write",
        store,
        samples,
        floor,
        _HOOK_TARGETS.get(store.records),
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


def _records(count: int) -> list[dict[str, Any]]:
    """count realistic records' save params, a `user` one first: a fitted section lists the
    user's guidance first, newest first (engine/delivery.py), so the hook's check finds it.

    A name the store holds is an update; the body's last line, new in each, makes it a write
    even where the corpus has the same record word for word (answered `unchanged` otherwise).
    """
    records = realistic_records(count, _SEED)
    users = [index for index, record in enumerate(records) if record.type is RecordType.USER]
    if users:
        records.insert(0, records.pop(users[0]))
    return [
        record.model_dump(mode="json", exclude={"provenance"})
        | {"body": f"{record.body}\n\nSaved by the benchmark's launch path, save {number}."}
        for number, record in enumerate(records, start=1)
    ]
