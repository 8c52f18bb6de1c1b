"""Peak memory per operation: a fresh `lazy engine` runs one read, then its VmHWM is read.

The warm engine's row (bench/engine.py) is one engine's peak after context, search and a
compaction together; here each operation gets an engine of its own, so each figure is what
that one operation costs on top of starting the engine and opening the store:

- list: `lazy/memory/recall` without a name, the whole index (the service's index, which
  `lazy memory list` prints; the CLI reads it in-process, or as `lazy/storage/list_index`
  from a daemon);
- search: `lazy/search` with the suite's queries (bench/engine.py) and the broad ones of
  bench/search.py, which match thousands of records at 100,000;
- context: `lazy/memory/context`, for a builder and for an agent (whose section lacks the
  doctor pointer of an oversized one);
- recall: `lazy/memory/recall` with a name (the MCP tool's `lazy_memory_recall(name=...)`),
  and without one page by page through the whole index; and `lazy/memory/context` page by
  page through the builder's section, which is what `lazy_memory_recall()` without a name
  pages (at the same default page size, 500,000 characters).

Each operation runs a few times in its engine (a walk through every page once: each page
reads the whole index again), so a peak that only a repeat reaches (a cache filled twice, a
reply still held while the next is built) shows too. The floor is the bare
pygls server's VmHWM (bench/bare_server.py); the target, 120 MB, is set at 100,000 records
on SQLite, and every other backend and size is reported as information.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bench.client import connected, lazy_command, peak_rss_mb, result
from bench.corpus import realistic_records
from bench.engine import SEARCH_QUERIES, BareServer
from bench.plan import Plan
from bench.report import Measurement, Target
from bench.search import BROAD_QUERIES
from bench.stores import Store
from tests.support.jsonrpc import RawClient

TARGET = Target(120)
TARGET_BACKEND, TARGET_RECORDS = "sqlite", 100_000
REPEATS = 3
"""How many times each operation runs in its engine before the peak is read."""
RECALLED = 10
"""How many records recall(name) reads, spread over the store."""
FLOOR_WHAT = "bare pygls server's VmHWM after initialize"
QUERIES = tuple(dict.fromkeys((*SEARCH_QUERIES, *BROAD_QUERIES)))
"""What search runs: the warm engine's queries and the broad ones, each once."""


@dataclass(frozen=True)
class Operation:
    """One row: what it is called, the requests one run of it makes, and how many runs."""

    what: str
    run: Callable[[RawClient, Sequence[str]], Awaitable[None]]
    """Makes the requests, given the client and the names of a few stored records."""
    repeats: int = REPEATS


async def _list(client: RawClient, _: Sequence[str]) -> None:
    await result(client, "lazy/memory/recall", {})


async def _search(client: RawClient, _: Sequence[str]) -> None:
    for query in QUERIES:
        await result(client, "lazy/search", {"query": query})


async def _builder_context(client: RawClient, _: Sequence[str]) -> None:
    await result(client, "lazy/memory/context", {"role": "builder"})


async def _agent_context(client: RawClient, _: Sequence[str]) -> None:
    await result(client, "lazy/memory/context", {"role": "agent"})


async def _recall_names(client: RawClient, names: Sequence[str]) -> None:
    for name in names:
        await result(client, "lazy/memory/recall", {"name": name})


async def _recall_pages(client: RawClient, _: Sequence[str]) -> None:
    await _every_page(client, "lazy/memory/recall", {})


async def _context_pages(client: RawClient, _: Sequence[str]) -> None:
    await _every_page(client, "lazy/memory/context", {"role": "builder"})


async def _every_page(client: RawClient, method: str, params: dict[str, str]) -> None:
    page, pages = 1, 1
    while page <= pages:
        answer = await result(client, method, {**params, "page": page})
        page, pages = page + 1, answer["pages"]


OPERATIONS = (
    Operation("peak RSS, list (lazy/memory/recall, the whole index)", _list),
    Operation(f"peak RSS, search (lazy/search, {len(QUERIES)} queries)", _search),
    Operation("peak RSS, context (lazy/memory/context, builder)", _builder_context),
    Operation("peak RSS, context (lazy/memory/context, agent)", _agent_context),
    Operation(f"peak RSS, recall (lazy/memory/recall, {RECALLED} names)", _recall_names),
    Operation("peak RSS, recall (lazy/memory/recall, every index page)", _recall_pages, 1),
    Operation("peak RSS, recall (lazy/memory/context, every page)", _context_pages, 1),
)
"""Every operation measured, in the order of the rows."""


async def peak_memory(plan: Plan, store: Store, bare: BareServer) -> list[Measurement]:
    """Each operation's peak RSS, each in a fresh engine on store, beside the bare server's."""
    names = _spread_names(store.records)
    return [await _peak(plan, store, bare, operation, names) for operation in OPERATIONS]


async def _peak(
    plan: Plan, store: Store, bare: BareServer, operation: Operation, names: Sequence[str]
) -> Measurement:
    command = [*lazy_command(), "engine"]
    async with connected(command, store.environment(), plan.stderr) as client:
        for _ in range(operation.repeats):
            await operation.run(client, names)
        if client.process is None:
            raise RuntimeError("the client has no process")
        rss = peak_rss_mb(client.process.pid)
    targeted = (store.backend, store.records) == (TARGET_BACKEND, TARGET_RECORDS)
    return Measurement(
        operation.what,
        store.backend,
        store.records,
        rss,
        "MB",
        floor=bare.rss_mb,
        floor_what=FLOOR_WHAT,
        target=TARGET if targeted else None,
        samples=operation.repeats,
    )


def _spread_names(records: int) -> list[str]:
    """RECALLED names of the corpus of that size, evenly spread over it."""
    step = max(1, records // RECALLED)
    return [content.name for content in realistic_records(records)[::step]][:RECALLED]
