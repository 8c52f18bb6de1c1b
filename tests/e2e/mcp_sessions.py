"""Talking to `lazy mcp` through the MCP SDK's client: a session opener for the `connect`
fixture (tests/e2e/conftest.py), the text a tool result carries, the store's history."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

TIMEOUT = 60
"""Seconds a whole MCP conversation may take before the test fails instead of hanging."""

LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]

Connect = Callable[..., AbstractAsyncContextManager[ClientSession]]


def session_opener(project: Path, data_dir: Path, stderr_log: Path) -> Connect:
    """Start `lazy mcp` in project on the store in data_dir, with extra environment, and open
    an MCP session; the server's stderr goes to stderr_log."""

    @asynccontextmanager
    async def session(**environment: str) -> AsyncIterator[ClientSession]:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=[*LAZY[1:], "mcp"],
            env={**os.environ, "LAZY_DATA": str(data_dir), **environment},
            cwd=project,
        )
        with anyio.fail_after(TIMEOUT), stderr_log.open("a") as errlog:
            async with (
                stdio_client(parameters, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                yield client

    return session


def text_of(result: CallToolResult) -> str:
    """The one text block a tool result carries."""
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def history(project: Path) -> list[dict[str, Any]]:
    """Every write the store holds, as the real `lazy memory history --json` prints it."""
    done = await anyio.run_process([*LAZY, "memory", "history", "--json"], cwd=project)
    entries: list[dict[str, Any]] = json.loads(done.stdout)
    return entries
