"""The MCP tools as an agent harness calls them: `lazy mcp` driven by the MCP SDK's client.

The floor is the SDK's own ping round trip to the same `lazy mcp` process. (This module is
not called `mcp.py`: that name would shadow the SDK for scripts run from this folder.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from itertools import cycle
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

from bench.client import lazy_command, timings
from bench.corpus import realistic_records
from bench.engine import SEARCH_QUERIES
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store, copy_store

TARGET_RECORDS = 5_000
"""The store size the MCP targets are set at (a smaller run uses its largest size)."""

_TARGETS = {
    "lazy_memory_save": Target(2),
    "lazy_search": Target(3),
    "lazy_memory_recall": Target(2),
}


async def tools(plan: Plan, corpus: Store) -> list[Measurement]:
    """p50 of lazy_memory_save, lazy_search and lazy_memory_recall(name), on a copy of corpus."""
    store = copy_store(corpus, plan.workdir, "mcp")
    names = cycle(content.name for content in realistic_records(store.records))
    saves = iter(
        content.model_dump(mode="json", exclude={"provenance"})
        for content in realistic_records(plan.requests + 1, seed=2)
    )
    queries = cycle(SEARCH_QUERIES)
    calls: dict[str, Callable[[], dict[str, Any]]] = {
        "lazy_memory_save": lambda: next(saves),
        "lazy_search": lambda: {"query": next(queries)},
        "lazy_memory_recall": lambda: {"name": next(names)},
    }
    async with _session(plan, store) as session:
        ping = median(await timings(session.send_ping, plan.requests, plan.budget_seconds))
        return [
            await _tool_row(plan, session, store, ping, tool, arguments)
            for tool, arguments in calls.items()
        ]


async def _tool_row(
    plan: Plan,
    session: ClientSession,
    store: Store,
    ping: float,
    tool: str,
    arguments: Callable[[], dict[str, Any]],
) -> Measurement:
    samples = await time_calls(
        session, lambda: (tool, arguments()), plan.requests, plan.budget_seconds
    )
    return Measurement(
        f"MCP {tool}{'(name)' if tool == 'lazy_memory_recall' else ''}, p50",
        store.backend,
        store.records,
        median(samples),
        "ms",
        floor=ping,
        floor_what="MCP ping round trip to the same `lazy mcp`, p50",
        target=_TARGETS[tool],
        samples=len(samples),
    )


async def call_tool(session: ClientSession, tool: str, arguments: dict[str, Any]) -> None:
    """One tool call; a result flagged as an error is raised."""
    answer = await session.call_tool(tool, arguments)
    if answer.is_error:
        raise RuntimeError(f"{tool} failed: {_text(answer)[:500]}")


async def time_calls(
    session: ClientSession,
    next_call: Callable[[], tuple[str, dict[str, Any]]],
    wanted: int,
    budget_seconds: float,
) -> list[float]:
    """Milliseconds of up to wanted tool calls, each the (tool, arguments) next_call gives."""

    async def call() -> None:
        await call_tool(session, *next_call())

    return await timings(call, wanted, budget_seconds)


@asynccontextmanager
async def mcp_session(
    plan: Plan, parameters: StdioServerParameters
) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session to a server started over stdio, stderr to the log."""
    with plan.stderr.open("a") as errlog:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def _session(plan: Plan, store: Store) -> AbstractAsyncContextManager[ClientSession]:
    command = lazy_command()
    parameters = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "mcp"],
        env=store.environment(),
        cwd=store.root,
    )
    return mcp_session(plan, parameters)


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))
