"""The stdio engine: cold start, the cached launch context, search, compaction and peak memory.

Every timing is of a request answered by a real `lazy engine` process, sent and read by the
raw JSON-RPC client. A warm request's floor is a no-op round trip to the same engine (a
method it does not have: transport and dispatch, no work). The cold start's floor and the
memory floor come from the bare pygls server (bench/bare_server.py): its spawn-and-initialize
through the same client, and its peak memory. The launch context right after a write, which
renders, is the launch path's (bench/launch.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import cycle
from typing import Any

from bench.client import (
    BARE_SERVER,
    close,
    connected,
    lazy_command,
    no_op,
    peak_rss_mb,
    result,
    spawn,
    timings,
)
from bench.plan import Plan
from bench.report import Measurement, Target, median, percentile
from bench.stores import Store, copy_store
from tests.support.jsonrpc import RawClient

SEARCH_QUERIES = (
    "deploy",
    "postgres migration",
    "flaky test",
    "grafana dashboard latency",
    "rollback",
    "on-call schedule",
    "feature flag",
    "sentry errors",
    "incident runbook",
    "pagerduty",
)
"""What a builder looks for: common and rare words of the corpus, one to three at a time."""

NO_OP_FLOOR = "a no-op round trip to the same engine (an unknown method), p50"
"""The floor of every warm request."""

_SEARCH_TARGETS = {
    0.50: {10_000: Target(3), 100_000: Target(10)},
    0.95: {10_000: Target(10), 100_000: Target(30)},
}
_COMPACTION_TARGETS = {10_000: Target(1_000)}
_COLD_TARGET = Target(1.2, times_floor=True)
_BUILDER = {"role": "builder"}


@dataclass(frozen=True)
class BareServer:
    """What a pygls server with no lazy-memory code costs, measured once per run."""

    spawn_ms: float
    rss_mb: float


async def bare_server(plan: Plan) -> BareServer:
    """The bare server's spawn-to-initialized time (median) and its peak RSS."""
    environment = dict(os.environ)
    spawns = await _spawn_times(plan, BARE_SERVER, environment, None)
    async with connected(BARE_SERVER, environment, plan.stderr) as client:
        rss = peak_rss_mb(_pid(client))
    return BareServer(spawn_ms=median(spawns), rss_mb=rss)


async def cold_start(plan: Plan, store: Store, bare: BareServer) -> Measurement:
    """Spawn `lazy engine`, initialize, get the builder's launch context: the median."""
    samples = await _spawn_times(
        plan, [*lazy_command(), "engine"], store.environment(), ("lazy/memory/context", _BUILDER)
    )
    return Measurement(
        "cold: spawn engine, initialize, context",
        store.backend,
        store.records,
        median(samples),
        "ms",
        floor=bare.spawn_ms,
        floor_what="bare pygls server: spawn and initialize, median",
        target=_COLD_TARGET,
        samples=len(samples),
    )


async def warm(plan: Plan, corpus: Store, bare: BareServer) -> list[Measurement]:
    """Context, search and mechanical compaction on one warm engine, then its peak RSS.

    It runs on a copy of the corpus store, since compaction writes the compact slot. Every
    timed context after the first is the section the engine keeps while the store's change
    marker stays (engine/launching.py): a cached hit, with no target of its own.
    """
    store = copy_store(corpus, plan.workdir, "warm")
    command = [*lazy_command(), "engine"]
    async with connected(command, store.environment(), plan.stderr) as client:
        floor = median(await timings(partial(no_op, client), plan.requests, plan.budget_seconds))
        context = await timings(
            lambda: result(client, "lazy/memory/context", _BUILDER),
            plan.requests,
            plan.budget_seconds,
        )
        rows = [
            request_row(
                "warm lazy/memory/context, cached hit, p50",
                store,
                median(context),
                context,
                floor,
                {},
            )
        ]
        rows += await _search(plan, client, store, floor)
        rows.append(await _compaction(plan, client, store, floor))
        rss = peak_rss_mb(_pid(client))
    rows.append(
        Measurement(
            "peak RSS of the warm engine, compaction included (VmHWM)",
            store.backend,
            store.records,
            rss,
            "MB",
            floor=bare.rss_mb,
            floor_what="bare pygls server's VmHWM after initialize",
        )
    )
    return rows


async def _search(plan: Plan, client: RawClient, store: Store, floor: float) -> list[Measurement]:
    queries = cycle(SEARCH_QUERIES)
    samples = await timings(
        lambda: result(client, "lazy/search", {"query": next(queries)}),
        plan.requests,
        plan.budget_seconds,
    )
    return [
        request_row(
            f"lazy/search, p{share * 100:.0f}",
            store,
            percentile(samples, share),
            samples,
            floor,
            targets,
        )
        for share, targets in _SEARCH_TARGETS.items()
    ]


async def _compaction(plan: Plan, client: RawClient, store: Store, floor: float) -> Measurement:
    compactions = await timings(
        lambda: result(client, "lazy/memory/compact", {"mode": "mechanical"}),
        plan.repeat,
        plan.budget_seconds,
    )
    return request_row(
        "mechanical compaction, median",
        store,
        median(compactions),
        compactions,
        floor,
        _COMPACTION_TARGETS,
    )


def request_row(
    what: str,
    store: Store,
    value: float,
    samples: Sequence[float],
    floor: float,
    targets: Mapping[int, Target],
) -> Measurement:
    """A warm request's row: value (a median or a percentile of samples, in ms) beside the
    no-op floor, and the target set at the store's size, if any."""
    return Measurement(
        what,
        store.backend,
        store.records,
        value,
        "ms",
        floor=floor,
        floor_what=NO_OP_FLOOR,
        target=targets.get(store.records),
        samples=len(samples),
    )


async def _spawn_times(
    plan: Plan,
    command: list[str],
    environment: Mapping[str, str],
    first_request: tuple[str, Any] | None,
) -> list[float]:
    """Milliseconds from spawning command to its initialize (and first_request) answered."""
    samples = []
    for _ in range(plan.repeat):
        start = time.perf_counter()
        client = await spawn(command, environment, plan.stderr)
        try:
            await client.initialize()
            if first_request is not None:
                await result(client, *first_request)
            samples.append((time.perf_counter() - start) * 1000)
        finally:
            await close(client)
    return samples


def _pid(client: RawClient) -> int:
    if client.process is None:
        raise RuntimeError("the client has no process")
    return client.process.pid
