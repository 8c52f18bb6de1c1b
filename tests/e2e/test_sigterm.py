"""SIGTERM during a burst of saves, to each process that serves the store to clients.

`lazy engine` (stdio), `lazy engine --listen` and `lazy mcp` are what a container, systemd or
a harness stops with SIGTERM. Each must answer the requests it has already read, keep every
write it acknowledged, and exit 0 within about a second: a container runtime kills a process
that outlives its stop timeout (exit 137), and a write killed half-way is a lost one.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import add_token, running_daemon
from tests.support.jsonrpc import RawClient

LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]
WRITERS = 32
"""Saves in flight at once: each writer sends its next save as soon as the last is answered.
Fewer rarely catch a server that cancels its running requests with a write committed."""
ACKNOWLEDGED_BEFORE_SIGNAL = 40
"""Saves answered before the signal: the burst is well under way when it lands."""
STOP_SECONDS = 1.0
"""From SIGTERM to exit (about 0.1 s here): the servers give the requests they have read at
most half a second to be answered."""
TIMEOUT = 30.0

Save = Callable[[str], Awaitable[str | None]]
"""Save a record by name: None once acknowledged, else the error it was answered with; raises
OSError (ConnectionError included) once the server has closed the connection."""


@dataclass
class Burst:
    """What the clients saw: the saves acknowledged, the error answers, when the signal went."""

    acknowledged: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)
    signalled_at: float = 0.0


async def burst(save: Save, terminate: Callable[[], None]) -> Burst:
    """WRITERS clients saving back to back; SIGTERM once ACKNOWLEDGED_BEFORE_SIGNAL are answered.

    The writers carry on after the signal, as real clients would, until the server closes
    or refuses a save.
    """
    seen = Burst()
    names = itertools.count()
    enough = asyncio.Event()

    async def writer() -> None:
        while True:
            name = f"burst-{next(names)}"
            try:
                error = await save(name)
            except (OSError, EOFError, asyncio.IncompleteReadError):
                return
            if error is not None:
                seen.errors[name] = error
                return
            seen.acknowledged.add(name)
            if len(seen.acknowledged) >= ACKNOWLEDGED_BEFORE_SIGNAL:
                enough.set()

    writers = [asyncio.ensure_future(writer()) for _ in range(WRITERS)]
    await asyncio.wait_for(enough.wait(), TIMEOUT)
    seen.signalled_at = time.monotonic()
    terminate()
    await asyncio.wait_for(asyncio.gather(*writers), TIMEOUT)
    return seen


def written(data_dir: Path) -> set[str]:
    """Every name the store's history holds, as `lazy memory history --json` prints it."""
    listed = subprocess.run(
        [*LAZY, "memory", "history", "--json"],
        env={**os.environ, "LAZY_DATA": str(data_dir), "LAZY_STORAGE": "sqlite"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return {entry["name"] for entry in json.loads(listed.stdout)}


def check(seen: Burst, status: int | None, exited_at: float, data_dir: Path, log: str) -> None:
    """Exit 0 soon after the signal; every write answered, every answered write kept, and a
    save refused only because the server was stopping, and then not run."""
    assert status == 0, log
    assert exited_at - seen.signalled_at < STOP_SECONDS, log
    assert all("stopping" in error for error in seen.errors.values()), seen.errors
    store = written(data_dir)
    assert not store & set(seen.errors), "refused saves were written"
    assert seen.acknowledged <= store, "acknowledged saves lost"
    # A save the server had read was answered before it went: none was written unanswered.
    assert store <= seen.acknowledged, "writes made but never answered"
    assert "Traceback" not in log, log


def save_params(name: str) -> dict[str, str]:
    """A valid save of the record name."""
    return {"name": name, "type": "project", "description": f"about {name}", "body": "b"}


def environment(data_dir: Path) -> dict[str, str]:
    """A builder's environment over a fresh sqlite store in data_dir."""
    return {
        **os.environ,
        "LAZY_DATA": str(data_dir),
        "LAZY_STORAGE": "sqlite",
        "LAZY_ACTOR": "sigterm-test",
    }


def rpc_save(client: RawClient) -> Save:
    """Save over JSON-RPC (the engine's method table)."""

    async def save(name: str) -> str | None:
        response = await client.request("lazy/memory/save", save_params(name))
        return None if "result" in response else str(response["error"]["message"])

    return save


async def test_sigterm_stops_the_stdio_engine_cleanly_mid_burst(
    tmp_path: Path, project: Path
) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "engine.log"
    client = await RawClient.spawn(["engine"], environment(data_dir), log, cwd=project)
    process = client.process
    assert process is not None
    try:
        assert "result" in await client.initialize()
        seen = await burst(rpc_save(client), lambda: process.send_signal(signal.SIGTERM))
        status = await asyncio.wait_for(process.wait(), TIMEOUT)
        exited_at = time.monotonic()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    check(seen, status, exited_at, data_dir, log.read_text())


async def test_sigterm_stops_the_daemon_cleanly_mid_burst(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    token = add_token(data_dir, "builder", "sigterm-test")
    with running_daemon(data_dir, "tcp:127.0.0.1:0") as daemon:
        host, _, port = daemon.address.removeprefix("tcp:").rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        client = RawClient(reader, writer)
        assert "result" in await client.initialize({"token": token})
        seen = await burst(rpc_save(client), lambda: daemon.process.send_signal(signal.SIGTERM))
        status = await asyncio.to_thread(daemon.process.wait, TIMEOUT)
        exited_at = time.monotonic()
        writer.close()
    check(seen, status, exited_at, data_dir, "".join(daemon.log))


class McpLines:
    """A raw MCP client over `lazy mcp`'s stdin and stdout: one JSON message per line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.receiving = asyncio.ensure_future(self._receive())

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a line."""
        self.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await self.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and return the whole response."""
        if self.receiving.done():  # nothing would ever answer it
            raise ConnectionError("lazy mcp closed its output")
        message_id = next(self.ids)
        future = self.pending[message_id] = asyncio.get_running_loop().create_future()
        await self.send({"id": message_id, "method": method, "params": params})
        return await asyncio.wait_for(future, TIMEOUT)

    async def _receive(self) -> None:
        while line := await self.stdout.readline():
            message = json.loads(line)
            future = self.pending.pop(message.get("id"), None)
            if future is not None and "method" not in message:
                future.set_result(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("lazy mcp closed its output"))


@asynccontextmanager
async def mcp_server(data_dir: Path, project: Path, log: Path) -> AsyncIterator[McpLines]:
    """`lazy mcp` started and initialized; killed afterwards if it is still running."""
    with log.open("ab") as errors:
        process = await asyncio.create_subprocess_exec(
            *LAZY,
            "mcp",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
            env=environment(data_dir),
            cwd=project,
        )
    client = McpLines(process)
    try:
        initialized = await client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test_sigterm", "version": "0"},
            },
        )
        assert "result" in initialized, initialized
        await client.send({"method": "notifications/initialized"})
        yield client
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_sigterm_stops_lazy_mcp_cleanly_mid_burst(tmp_path: Path, project: Path) -> None:
    data_dir = tmp_path / "data"
    log = tmp_path / "mcp.log"
    async with mcp_server(data_dir, project, log) as client:

        async def save(name: str) -> str | None:
            call = {"name": "lazy_memory_save", "arguments": save_params(name)}
            response = await client.request("tools/call", call)
            if "result" in response and not response["result"].get("isError"):
                return None
            return json.dumps(response)

        seen = await burst(save, lambda: client.process.send_signal(signal.SIGTERM))
        status = await asyncio.wait_for(client.process.wait(), TIMEOUT)
        exited_at = time.monotonic()
    check(seen, status, exited_at, data_dir, log.read_text())


def catches_sigterm(pid: int) -> bool:
    """True once the process has a handler for SIGTERM (Linux: its SigCgt mask)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.mark.parametrize("command", [["engine"], ["mcp"]], ids=["engine", "mcp"])
def test_sigterm_while_starting_up_exits_0_at_once(
    tmp_path: Path, project: Path, command: list[str]
) -> None:
    # As a container's PID 1 a process ignores SIGTERM it has no handler for: the handler
    # must be there long before the store is open and the server serves.
    process = subprocess.Popen(
        [*LAZY, *command],
        env=environment(tmp_path / "data"),
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not catches_sigterm(process.pid):
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.001)
        process.send_signal(signal.SIGTERM)
        signalled_at = time.monotonic()
        status = process.wait(TIMEOUT)
        assert status == 0, process.stderr.read() if process.stderr else ""
        assert time.monotonic() - signalled_at < STOP_SECONDS
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
