"""Flatness: what one save, search or recall costs at the largest store against the smallest.

Issue 20 asks the per-operation cost of save, search and recall to stay flat from 1,000 to
100,000 records on every backend: the cost at 100,000 at most 1.5 x the cost at 1,000.
`flatness` derives one row per operation and backend from rows the run measured at each
size: a save's mean cost (the sequential batches' median rate, inverted, so the slow tail
counts), and the p50 of `lazy/search` and of `recall_timings`' recall by name, each as
measured, round trip included. A run that does not span 1,000 to 100,000 records compares
its largest store with its smallest, as information; a backend lacking either size is
reported missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import cycle

from bench.client import connected, lazy_command, no_op, result, timings
from bench.corpus import realistic_records
from bench.engine import NO_OP_FLOOR
from bench.plan import Plan
from bench.report import Measurement, Target, median, missing
from bench.stores import Store

RECALL = "lazy/memory/recall(name), p50"
"""The row of recall_timings: the method `lazy_memory_recall(name)` calls.

(rpc/jsonrpc/methods.py binds it.)
"""

FLATNESS_LIMIT = 1.5
"""How much costlier an operation may be at 100,000 records than at 1,000 and be "flat"."""

SPAN = (1_000, 100_000)
"""The store sizes the issue's flatness target compares."""


@dataclass(frozen=True)
class _Operation:
    """An operation whose flatness is judged, and the rows its per-operation cost is read from."""

    source: str
    """The `what` of the rows measured at each size."""
    cost: str
    """What the ratio compares, as the row's name says it."""
    per_operation: Callable[[float], float]
    """A source row's value as the cost of one operation (any unit: only ratios are used)."""


_OPERATIONS = (
    _Operation("save, 1 client sequential, rate", "save, mean cost", lambda rate: 1 / rate),
    _Operation("lazy/search, p50", "lazy/search, p50", lambda p50: p50),
    _Operation(RECALL, "lazy/memory/recall(name), p50", lambda p50: p50),
)


async def recall_timings(plan: Plan, store: Store) -> list[Measurement]:
    """p50 of recalling a record by name on a warm `lazy engine`, names spread over the store.

    The floor is a no-op round trip to the same engine. Nothing is written, so the corpus
    store is read as it is.
    """
    names = [content.name for content in realistic_records(store.records)]
    spread = cycle(names[:: max(1, len(names) // plan.requests)])
    async with connected([*lazy_command(), "engine"], store.environment(), plan.stderr) as client:
        floor = median(await timings(partial(no_op, client), plan.requests, plan.budget_seconds))
        samples = await timings(
            lambda: result(client, "lazy/memory/recall", {"name": next(spread)}),
            plan.requests,
            plan.budget_seconds,
        )
    return [
        Measurement(
            RECALL,
            store.backend,
            store.records,
            median(samples),
            "ms",
            floor=floor,
            floor_what=NO_OP_FLOOR,
            samples=len(samples),
        )
    ]


def flatness(measurements: Sequence[Measurement]) -> list[Measurement]:
    """One row per operation and backend: its cost at the largest size over the smallest.

    The sizes are every size any backend measured the operation at; when they include 1,000
    and 100,000 those two are compared against FLATNESS_LIMIT, else the largest and the
    smallest, with no target. Nothing is derived for an operation measured at one size only.
    """
    rows = []
    for operation in _OPERATIONS:
        costs = _costs(operation, measurements)
        sizes = {size for by_size in costs.values() for size in by_size}
        if len(sizes) < 2:
            continue
        spans = set(SPAN) <= sizes
        smallest, largest = SPAN if spans else (min(sizes), max(sizes))
        what = f"{operation.cost} / at {smallest:,}"
        compared = (
            "" if spans else f"; this run compares {largest:,} with {smallest:,}, as information"
        )
        for backend, by_size in costs.items():
            absent = [f"{size:,}" for size in (smallest, largest) if size not in by_size]
            if absent:
                reason = f"{operation.source} was not measured at {' and '.join(absent)} records"
                rows.append(missing(what, backend, largest, reason))
                continue
            rows.append(
                Measurement(
                    what,
                    backend,
                    largest,
                    by_size[largest] / by_size[smallest],
                    "x",
                    target=Target(FLATNESS_LIMIT) if spans else None,
                    note=f'"flat": the cost at {SPAN[1]:,} records at most {FLATNESS_LIMIT} x '
                    f"that at {SPAN[0]:,}; a save's cost is its mean (1 / the batches' median "
                    "rate), search and recall their p50, round trip included" + compared,
                )
            )
    return rows


def _costs(
    operation: _Operation, measurements: Sequence[Measurement]
) -> dict[str, dict[int, float]]:
    """The cost of one operation by backend, then by store size, from what was measured."""
    costs: dict[str, dict[int, float]] = {}
    for m in measurements:
        if m.what == operation.source and not m.missing_reason:
            costs.setdefault(m.backend, {})[m.records] = operation.per_operation(m.value)
    return costs
