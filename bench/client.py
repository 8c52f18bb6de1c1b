"""Processes under measurement: how `lazy` is started, a JSON-RPC peer over stdio, its memory.

The JSON-RPC side is the end-to-end tests' raw client (it frames messages itself, with no
pygls on the client side), so the engine and the bare pygls server are timed through
exactly the same code.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from tests.support.jsonrpc import RawClient

# -P keeps bench/ off the bare server's sys.path, where its modules could shadow a dependency.
BARE_SERVER = [sys.executable, "-P", str(Path(__file__).with_name("bare_server.py"))]
"""The cold start's floor: a pygls server answering initialize, nothing else."""

NO_OP = "bench/no-op"
"""A method no engine has: its error answer is a round trip with no work behind it."""

_METHOD_NOT_FOUND = -32601
_CLOSE_SECONDS = 30.0


def lazy_command() -> list[str]:
    """How a user starts `lazy`: the console script beside this Python, else `python -m`."""
    script = Path(sys.executable).with_name("lazy")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "lazy_memory.rpc.cli"]


async def spawn(command: list[str], environment: Mapping[str, str], stderr: Path) -> RawClient:
    """Start command with a JSON-RPC client on its stdin/stdout and its stderr in a file."""
    with stderr.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env=dict(environment),
        )
    if process.stdout is None or process.stdin is None:
        raise RuntimeError(f"{command[0]} has no pipes")
    client = RawClient(process.stdout, process.stdin)
    client.process = process
    return client


@asynccontextmanager
async def connected(
    command: list[str], environment: Mapping[str, str], stderr: Path
) -> AsyncIterator[RawClient]:
    """A spawned, initialized peer, shut down (or killed, if it will not stop) afterwards."""
    client = await spawn(command, environment, stderr)
    try:
        await client.initialize()
        yield client
    finally:
        await close(client)


async def close(client: RawClient) -> None:
    """shutdown and exit, or kill the process if that does not end it."""
    try:
        await asyncio.wait_for(client.close(), _CLOSE_SECONDS)
    except (TimeoutError, ConnectionError):
        if client.process is not None:
            with suppress(ProcessLookupError):
                client.process.kill()
            await client.process.wait()


class RequestFailed(Exception):
    """A request the peer answered with a JSON-RPC error."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")


async def result(client: RawClient, method: str, params: Any = None) -> Any:
    """A request's result; an error response is raised, not returned."""
    response = await client.request(method, params)
    if "error" in response:
        raise RequestFailed(method, response["error"])
    return response["result"]


async def no_op(client: RawClient) -> None:
    """One round trip through the peer's transport and dispatch, and nothing else."""
    response = await client.request(NO_OP, {"role": "builder"})
    if response.get("error", {}).get("code") != _METHOD_NOT_FOUND:
        raise RuntimeError(f"{NO_OP} is meant to be unknown, but got {response}")


async def timings(
    call: Callable[[], Awaitable[object]], wanted: int, budget_seconds: float
) -> list[float]:
    """Milliseconds of each of up to wanted sequential calls, after an untimed warm-up call.

    A slow call gets fewer samples: as many as fit in the budget at the warm-up's pace, but
    never fewer than three.
    """
    start = time.perf_counter()
    await call()
    first_seconds = time.perf_counter() - start
    count = max(3, min(wanted, int(budget_seconds / max(first_seconds, 1e-6))))
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM) so far, in MB (10^6 bytes)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"/proc/{pid}/status has no VmHWM")
