"""`lazy engine` processes on stdio for a test, never left running after it, pass or fail."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path

import pytest

from tests.support.jsonrpc import RawClient

SpawnEngine = Callable[[Mapping[str, str], Path], Awaitable[RawClient]]
"""Start `lazy engine` with this environment, its stderr in this file; a raw client on it."""


@pytest.fixture
async def spawn_engine() -> AsyncIterator[SpawnEngine]:
    """Start engines for the test; any still running when it ends is killed."""
    started: list[RawClient] = []

    async def spawn(environment: Mapping[str, str], log: Path) -> RawClient:
        client = await RawClient.spawn(["engine"], environment, log)
        started.append(client)
        return client

    yield spawn
    for client in started:
        process = client.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
