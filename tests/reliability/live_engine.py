"""Real `lazy engine` and `lazy mcp` processes that synchronous hypothesis tests can talk to.

Hypothesis runs a test function once per example and does not await coroutines, while the
clients are asyncio code. Each process here lives on an event loop in a thread of its own for
the whole test module, so every example talks to the same process: a crash, a hang or a wedged
connection left by one example shows in the next.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

from tests.support.jsonrpc import RawClient

T = TypeVar("T")
TIMEOUT = 30.0
LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]


class LoopThread:
    """An asyncio event loop running in a daemon thread; `run` executes a coroutine on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        """Run coroutine on the loop and wait for its result (its exception is raised here)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(TIMEOUT)
        self.loop.close()


def memory_rss_kib(pid: int) -> int:
    """A process's resident set size, in KiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


class LiveEngine:
    """One `lazy engine` on stdio, initialized, driven with raw JSON-RPC from any thread."""

    def __init__(self, environment: Mapping[str, str], log: Path, cwd: Path | None = None) -> None:
        self.log = log
        self.loop = LoopThread()
        self.ids = itertools.count(10_000)
        self.client = self.loop.run(_spawn(environment, log, cwd))
        initialized = self.loop.run(self.client.initialize())
        assert "result" in initialized, initialized

    @property
    def pid(self) -> int:
        """The engine's process id."""
        assert self.client.process is not None
        return self.client.process.pid

    def alive(self) -> bool:
        """True while the engine process runs."""
        assert self.client.process is not None
        return self.client.process.returncode is None

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """A well-formed request; the whole response."""
        return self.loop.run(self.client.request(method, params))

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message as given (any id, any params); its response, matched by id.

        A message whose id is not a string or an integer is answered with an id of null,
        which the raw client keeps with the other unsolicited messages.
        """
        return self.loop.run(self._message(message))

    async def _message(self, message: dict[str, Any]) -> dict[str, Any]:
        message_id = message.get("id")
        answerable = isinstance(message_id, int | str) and not isinstance(message_id, bool)
        if answerable:
            future = self.loop.loop.create_future()
            self.client.pending[message_id] = future
            await self.client.send_raw(frame_bytes(message))
            return await asyncio.wait_for(future, TIMEOUT)
        await self.client.send_raw(frame_bytes(message))
        return await self.client.next_unsolicited()

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer is due)."""
        self.loop.run(self.client.notify(method, params))

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are."""
        self.loop.run(self.client.send_raw(data))

    def next_unsolicited(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message that answered no pending request."""
        return self.loop.run(asyncio.wait_for(self.client.unsolicited.get(), timeout))

    def drain_unsolicited(self) -> list[dict[str, Any]]:
        """Every unsolicited message received so far (notifications, id-less errors)."""
        drained = []
        queue = self.client.unsolicited

        async def take() -> None:
            while not queue.empty():
                drained.append(queue.get_nowait())

        self.loop.run(take())
        return drained

    def serving(self) -> bool:
        """True if the engine answers a plain recall right now."""
        return "result" in self.request("lazy/memory/recall")

    def close(self) -> int | None:
        """shutdown and exit; the engine's exit status (it is killed if it does not go)."""
        try:
            status = self.loop.run(self.client.close())
        except (TimeoutError, ConnectionError, concurrent.futures.TimeoutError):
            status = None
        process = self.client.process
        if process is not None and process.returncode is None:
            process.kill()
            self.loop.run(process.wait())
        self.loop.close()
        return status


def frame_bytes(message: Any) -> bytes:
    """One message framed with its Content-Length, lone surrogates escaped as JSON allows."""
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _spawn(environment: Mapping[str, str], log: Path, cwd: Path | None) -> RawClient:
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            *LAZY,
            "engine",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(environment),
            cwd=cwd,
            limit=64 * 1024 * 1024,
        )
    assert process.stdout is not None
    assert process.stdin is not None
    client = RawClient(process.stdout, process.stdin)  # type: ignore[arg-type]
    client.process = process
    return client


class LiveMcp:
    """One `lazy mcp` process behind the MCP SDK's own client, callable from any thread.

    The SDK's client must be entered and left in one task, so a task of the loop thread owns
    the session and runs the calls queued for it.
    """

    def __init__(self, environment: Mapping[str, str], log: Path, cwd: Path) -> None:
        self.loop = LoopThread()
        self._calls: asyncio.Queue[
            tuple[Callable[[Any], Awaitable[Any]], concurrent.futures.Future[Any]] | None
        ] = asyncio.Queue()
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._owner = asyncio.run_coroutine_threadsafe(
            self._own(environment, log, cwd), self.loop.loop
        )
        self._ready.result(TIMEOUT)

    async def _own(self, environment: Mapping[str, str], log: Path, cwd: Path) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        parameters = StdioServerParameters(
            command=sys.executable, args=[*LAZY[1:], "mcp"], env=dict(environment), cwd=cwd
        )
        try:
            async with AsyncExitStack() as stack:
                errlog = stack.enter_context(log.open("a"))
                read, write = await stack.enter_async_context(
                    stdio_client(parameters, errlog=errlog)
                )
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                self._ready.set_result(None)
                while (item := await self._calls.get()) is not None:
                    call, result = item
                    try:
                        result.set_result(await asyncio.wait_for(call(session), TIMEOUT))
                    except Exception as error:
                        result.set_exception(error)
        except Exception as error:
            if not self._ready.done():
                self._ready.set_exception(error)
            raise

    def call(self, call: Callable[[Any], Awaitable[T]]) -> T:
        """Run call(session) in the task that owns the session; its result."""
        result: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.loop.loop.call_soon_threadsafe(self._calls.put_nowait, (call, result))
        return result.result(TIMEOUT + 5)

    def close(self) -> None:
        """Leave the session (the server sees end of input and exits) and stop the loop."""
        self.loop.loop.call_soon_threadsafe(self._calls.put_nowait, None)
        try:
            self._owner.result(TIMEOUT)
        finally:
            self.loop.close()


def engine_environment(data_dir: Path, **extra: str) -> dict[str, str]:
    """The process environment for a engine or MCP server on the store in data_dir."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LAZY_")}
    return {**environment, "LAZY_DATA": str(data_dir), **extra}
