"""`python -m bench --peers`: `lazy mcp` beside other memory MCP servers, in the same run.

Each peer is installed (pinned) into a cache outside the repository, started over stdio by
the same MCP SDK client as `lazy mcp`, given its own empty data folder, filled with the same
5,000 corpus records, and timed on the same workload as bench/mcp_tools.py: create (a save
of a new or existing record), search (the same ten queries), read (a corpus record by name).
The report quotes each peer's p50 beside its own MCP ping, then the peer's p50 over
`lazy mcp`'s (SQLite) for each operation: the target is at least 20 x the reference server.

The peers themselves (the MCP reference memory server and basic-memory: how each is
installed, started, filled and called) are in bench/peer_servers.py.

A peer that cannot be installed is reported with verdict `missing` and the reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from mcp import StdioServerParameters

from bench.client import timings
from bench.corpus import realistic_records
from bench.mcp_tools import TARGET_RECORDS, call_tool, mcp_session, time_calls, tools
from bench.peer_servers import REFERENCE_PACKAGE as REFERENCE_PACKAGE
from bench.peer_servers import BasicMemory, NextCall, PeerMissing, ReferenceServer
from bench.plan import Fixtures, Plan
from bench.report import Measurement, Target, median, missing
from lazy_memory.engine.records import RecordContent

OPERATIONS = {"create": "lazy_memory_save", "search": "lazy_search", "read": "lazy_memory_recall"}
"""The workload's operations and the `lazy mcp` tool each one is."""

_RATIO_TARGETS = {"reference": Target(20, at_least=True)}


class Peer(Protocol):
    """A memory MCP server to install, fill and drive through the workload's operations."""

    name: str
    version: str

    def install(self) -> None:
        """Install the pinned version into CACHE unless it is there; raise PeerMissing."""

    def server(self, data: Path) -> StdioServerParameters:
        """How to start it over stdio with its store in the empty folder data."""

    def prepare(self, data: Path, corpus: Sequence[RecordContent]) -> None:
        """Fill the store before the server starts (nothing, if it is filled through tools)."""

    def fill_calls(self, corpus: Sequence[RecordContent]) -> list[tuple[str, dict[str, Any]]]:
        """Tool calls that fill the running server with corpus (none if prepare did)."""

    def calls(
        self, corpus: Sequence[RecordContent], saves: Sequence[RecordContent]
    ) -> dict[str, tuple[str, NextCall]]:
        """For each operation, the tool(s) it calls, as the report names them, and its calls."""


PEERS: tuple[Peer, ...] = (ReferenceServer(), BasicMemory())


async def compare(plan: Plan, peers: Sequence[Peer] = PEERS) -> list[Measurement]:
    """`lazy mcp` at TARGET_RECORDS (SQLite), each peer at the same size, and the ratios."""
    records = min(TARGET_RECORDS, max(plan.sizes))
    fixtures = Fixtures(plan)
    lazy = await tools(plan, await fixtures.store("sqlite", records))
    lazy_p50 = {
        operation: next(m.value for m in lazy if m.what.startswith(f"MCP {tool}"))
        for operation, tool in OPERATIONS.items()
    }
    rows = list(lazy)
    for peer in peers:
        rows += await _peer_rows(plan, peer, records, lazy_p50)
    return rows


async def _peer_rows(
    plan: Plan, peer: Peer, records: int, lazy_p50: dict[str, float]
) -> list[Measurement]:
    label = f"{peer.name} {peer.version}"
    try:
        await asyncio.to_thread(peer.install)
        timed = await _drive(plan, peer, records)
    except PeerMissing as error:
        return [
            missing(f"peer {label}: {operation}, p50", peer.name, records, str(error))
            for operation in OPERATIONS
        ] + [
            missing(f"{operation}: {peer.name} p50 / lazy mcp p50", "sqlite", records, str(error))
            for operation in OPERATIONS
        ]
    ping, fill_seconds, samples = timed
    rows = [
        Measurement(
            f"peer {label}: fill the store",
            peer.name,
            records,
            fill_seconds,
            "s",
            note="fill: the corpus written through the peer's own path (see bench/peers.py), "
            "untimed by any target",
        )
    ]
    for operation, (tool, times) in samples.items():
        rows.append(
            Measurement(
                f"peer {label}: {operation} ({tool}), p50",
                peer.name,
                records,
                median(times),
                "ms",
                floor=ping,
                floor_what="MCP ping round trip to the same server, p50",
                samples=len(times),
            )
        )
    for operation, (_tool, times) in samples.items():
        rows.append(
            Measurement(
                f"{operation}: {peer.name} p50 / lazy mcp p50",
                "sqlite",
                records,
                median(times) / lazy_p50[operation],
                "x",
                # The target is set at TARGET_RECORDS: a small store says nothing of scale.
                target=_RATIO_TARGETS.get(peer.name) if records == TARGET_RECORDS else None,
                note="peer ratios: the peer's p50 over `lazy mcp`'s (SQLite, same store size, "
                "same run) for the same operation: how many times faster `lazy mcp` is",
            )
        )
    return rows


async def _drive(
    plan: Plan, peer: Peer, records: int
) -> tuple[float, float, dict[str, tuple[str, list[float]]]]:
    """The peer's ping p50, the fill's seconds and each operation's samples, on a new store."""
    data = plan.workdir / f"peer-{peer.name}"
    data.mkdir()
    corpus = realistic_records(records)
    saves = realistic_records(plan.requests + 1, seed=2)
    started = time.perf_counter()
    await asyncio.to_thread(peer.prepare, data, corpus)
    try:
        async with mcp_session(plan, peer.server(data)) as session:
            for tool, arguments in peer.fill_calls(corpus):
                await call_tool(session, tool, arguments)
            fill_seconds = time.perf_counter() - started
            ping = median(await timings(session.send_ping, plan.requests, plan.budget_seconds))
            samples = {}
            for operation, (tool, next_call) in peer.calls(corpus, saves).items():
                times = await time_calls(session, next_call, plan.requests, plan.budget_seconds)
                samples[operation] = (tool, times)
    except Exception as error:
        # A server that dies or refuses a call (the SDK raises McpError, anyio wraps errors in
        # groups) is reported as not measured, with why, and the run goes on to the next peer.
        raise PeerMissing(f"it failed to run: {error!r}"[:500]) from error
    return ping, fill_seconds, samples
