"""Save throughput: one client saving sequentially, and four clients saving at once.

Saves are `lazy/memory/save` requests of realistic records (another seed than the corpus,
so some names are new and some update a corpus record), each awaited before the next.
Four clients are four stdio engines on one store, and, for SQLite, four connections to one
daemon (tests/support/daemon.py starts it, as the end-to-end tests do). Every concurrent run checks
that nothing was lost, and nothing written unasked: the set of (name, revision) of every save
acknowledged as a write equals the set of history entries the run added to the store. An
acknowledged save missing from the history is lost; a history entry no acknowledged save
accounts for is an unacknowledged write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from functools import partial

from bench.client import (
    RequestFailed,
    close,
    connected,
    lazy_command,
    no_op,
    result,
    timings,
)
from bench.corpus import realistic_records
from bench.engine import NO_OP_FLOOR
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store, copy_store, history_revisions
from tests.support.daemon import add_token, running_daemon
from tests.support.jsonrpc import RawClient

CLIENTS = 4
"""Concurrent clients, as the target names them."""

TARGET_RECORDS = 10_000
"""The store size the save targets are set at (the nearest size of the run is used)."""

_SEQUENTIAL_TARGETS = {10_000: Target(1_000, at_least=True)}
_CONCURRENT_TARGET = Target(2_000, at_least=True)
_NOTHING_LOST = Target(0)

Save = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class SequentialSaves:
    """One client's saves at one store size, and no-op round trips to the same engine."""

    store: Store
    rates: list[float]
    latencies: list[float]
    no_ops: list[float]


async def sequential(plan: Plan, corpus: Store) -> SequentialSaves:
    """Batches of sequential saves by one engine, on a copy of the corpus store."""
    store = copy_store(corpus, plan.workdir, "saves")
    async with connected([*lazy_command(), "engine"], store.environment(), plan.stderr) as client:
        no_ops = await timings(partial(no_op, client), plan.saves, plan.budget_seconds)
        latencies = await timings(
            _saver(client, plan, store, seed=1), plan.repeat * plan.saves, plan.budget_seconds
        )
    # One stream of saves cut into batches: a slow backend gets fewer, or one short one.
    batches = [
        latencies[start : start + plan.saves] for start in range(0, len(latencies), plan.saves)
    ]
    return SequentialSaves(store, [_rate(batch) for batch in batches], latencies, no_ops)


def sequential_rows(results: Sequence[SequentialSaves]) -> list[Measurement]:
    """Saves/s and per-save p50 at each size (bench/flatness.py compares the sizes)."""
    rows = []
    for saves in results:
        store = saves.store
        rows += [
            Measurement(
                "save, 1 client sequential, rate",
                store.backend,
                store.records,
                median(saves.rates),
                "saves/s",
                floor=_rate(saves.no_ops),
                floor_what="no-op round trips/s to the same engine, one at a time",
                target=_SEQUENTIAL_TARGETS.get(store.records),
                samples=len(saves.rates),
            ),
            Measurement(
                "save, 1 client sequential, p50",
                store.backend,
                store.records,
                median(saves.latencies),
                "ms",
                floor=median(saves.no_ops),
                floor_what=NO_OP_FLOOR,
                samples=len(saves.latencies),
            ),
        ]
    return rows


async def concurrent(plan: Plan, corpus: Store) -> list[Measurement]:
    """Four stdio engines on one copy of the store (and four daemon connections for SQLite)."""
    store = copy_store(corpus, plan.workdir, "engines")
    async with _engines(plan, store) as clients:
        rows = await _concurrent_rows(plan, store, clients, f"{CLIENTS} stdio engines")
    if store.backend == "sqlite":
        store = copy_store(corpus, plan.workdir, "daemon")
        async with _daemon_connections(plan, store) as clients:
            rows += await _concurrent_rows(plan, store, clients, f"{CLIENTS} daemon connections")
    return rows


async def _concurrent_rows(
    plan: Plan, store: Store, clients: Sequence[RawClient], label: str
) -> list[Measurement]:
    no_ops = await _together([partial(no_op, client) for client in clients], plan.saves)
    before = await history_revisions(store)
    savers = [
        _saver(client, plan, store, seed=100 + number) for number, client in enumerate(clients)
    ]
    # A first round of one save each sets the pace, so a slow backend gets fewer rounds.
    rounds = [await _together(savers, 1)]
    affordable = max(3, int(plan.budget_seconds / rounds[0].seconds))
    each = min(plan.saves, affordable)
    repeats = max(1, min(plan.repeat, affordable // each))
    rounds += [await _together(savers, each) for _ in range(repeats)]
    check = RevisionCheck(
        acknowledged={revision for round_ in rounds for revision in round_.written},
        stored=await history_revisions(store) - before,
    )
    acknowledged = sum(round_.done for round_ in rounds)
    failures = [failure for round_ in rounds for failure in round_.failures]
    failed_note = f"; {len(failures)} saves failed, first: {failures[0]}" if failures else ""
    counted = (
        f"{label}, {store.backend}: {acknowledged} saves acknowledged, "
        f"{len(check.acknowledged)} of them writes{failed_note}"
    )
    return [
        Measurement(
            f"save, {label}, total",
            store.backend,
            store.records,
            median([round_.rate for round_ in rounds[1:]]),
            "saves/s",
            floor=no_ops.rate,
            floor_what=f"no-op round trips/s to the same {CLIENTS} clients at once, in total",
            target=_CONCURRENT_TARGET,
            samples=repeats,
        ),
        Measurement(
            f"lost saves, {label}",
            store.backend,
            store.records,
            len(check.lost),
            "saves",
            target=_NOTHING_LOST,
            note="lost saves: acknowledged (name, revision) missing from the history; "
            + counted
            + _examples(check.lost),
        ),
        Measurement(
            f"unacknowledged writes, {label}",
            store.backend,
            store.records,
            len(check.unacknowledged),
            "writes",
            target=_NOTHING_LOST,
            note="unacknowledged writes: history entries of the run no acknowledged save "
            "accounts for" + _examples(check.unacknowledged),
        ),
    ]


Revision = tuple[str, int]
"""A write as the history records it: the record's name and the revision it made."""


@dataclass(frozen=True)
class RevisionCheck:
    """What the saves acknowledged as writes against what the store's history gained."""

    acknowledged: set[Revision]
    stored: set[Revision]

    @property
    def lost(self) -> set[Revision]:
        """Acknowledged writes the history does not hold."""
        return self.acknowledged - self.stored

    @property
    def unacknowledged(self) -> set[Revision]:
        """Writes in the history that no acknowledged save made."""
        return self.stored - self.acknowledged


def _examples(revisions: set[Revision], shown: int = 3) -> str:
    if not revisions:
        return ""
    listed = ", ".join(f"{name}@{revision}" for name, revision in sorted(revisions)[:shown])
    return f"; e.g. {listed}"


@dataclass(frozen=True)
class _Round:
    """Calls made at once by several clients: how long it took and what came back."""

    seconds: float
    done: int
    written: list[Revision]
    """(name, revision) of each save acknowledged as a write (not answered `unchanged`)."""
    failures: list[str]

    @property
    def rate(self) -> float:
        """Calls answered per second, in total."""
        return (self.done + len(self.failures)) / self.seconds


async def _together(calls: Sequence[Save], each: int) -> _Round:
    """Every call made each times in sequence, all calls at once."""
    failures: list[str] = []
    written: list[Revision] = []

    async def run(call: Save) -> int:
        done = 0
        for _ in range(each):
            try:
                answer = await call()
            except RequestFailed as error:
                failures.append(str(error))
            else:
                done += 1
                # A save equal to the live revision is answered `unchanged` and writes nothing.
                if isinstance(answer, dict) and not answer.get("unchanged"):
                    written.append((answer["name"], answer["revision"]))
        return done

    start = time.perf_counter()
    done = sum(await asyncio.gather(*(run(call) for call in calls)))
    return _Round(time.perf_counter() - start, done, written, failures)


def _rate(milliseconds: Sequence[float]) -> float:
    """Calls per second, for calls made one after another taking these times."""
    return 1000 * len(milliseconds) / sum(milliseconds)


def _saver(client: RawClient, plan: Plan, store: Store, seed: int) -> Save:
    """A call that saves the next of enough realistic records for the run, made beforehand.

    Every other save updates a record of the store (spread over it) and the rest create new
    ones, at every store size: drawn from another seed alone, the names would mostly be new at
    1,000 records and mostly the store's own at 100,000, and the sizes would compare creates
    with updates (bench/flatness.py compares them).
    """
    # Every save a run can make, and a warm-up; generated up front so no timing includes it.
    needed = plan.repeat * plan.saves + 1
    existing = [content.name for content in realistic_records(store.records)]
    saves = []
    for number, content in enumerate(realistic_records(needed, seed)):
        fields = content.model_dump(mode="json", exclude={"provenance"})
        if number % 2:
            fields["name"] = existing[(number * 7_919 + seed) % len(existing)]
        else:
            fields["name"] = f"{content.name[:150]}-s{seed}n{number}"
        saves.append(fields)
    params = iter(saves)
    return lambda: result(client, "lazy/memory/save", next(params))


@asynccontextmanager
async def _engines(plan: Plan, store: Store) -> AsyncIterator[list[RawClient]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                connected(
                    [*lazy_command(), "engine"],
                    store.environment(LAZY_ACTOR=f"bench-{number}"),
                    plan.stderr,
                )
            )
            for number in range(CLIENTS)
        ]


@asynccontextmanager
async def _daemon_connections(plan: Plan, store: Store) -> AsyncIterator[list[RawClient]]:
    secret = add_token(store.data_dir, "builder", name="bench")
    listen = f"unix:{plan.workdir / 'daemon.sock'}"
    with running_daemon(store.data_dir, listen) as daemon:
        clients = []
        try:
            for _ in range(CLIENTS):
                reader, writer = await asyncio.open_unix_connection(daemon.address[len("unix:") :])
                client = RawClient(reader, writer)
                clients.append(client)
                response = await client.initialize({"token": secret})
                if "error" in response:
                    raise RequestFailed("initialize", response["error"])
            yield clients
        finally:
            for client in clients:
                await close(client)
            daemon.stop()
