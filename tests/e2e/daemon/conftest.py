"""The fixtures of the daemon's tests: `start_daemon` starts real daemons, waits until each
listens or exits, and kills any left running; `socket_directory` is short enough for unix
sockets; `address` is a unix socket or a TCP port on the loopback interface."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.e2e.daemon.raw_daemon import READY, Daemon, StartDaemon
from tests.support.jsonrpc import TIMEOUT


@pytest.fixture
def socket_directory() -> Iterator[Path]:
    """A short directory for unix sockets (their paths are limited to about 100 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="lzd-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
async def start_daemon() -> AsyncIterator[StartDaemon]:
    """Start daemons and wait until each listens or exits; any left running are killed."""
    daemons: list[Daemon] = []
    readers: list[asyncio.Task[None]] = []

    async def start(*arguments: str) -> Daemon:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lazy_memory.rpc.cli",
            "engine",
            *arguments,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        daemon = Daemon(process)
        daemons.append(daemon)
        # The address it listens on, or None if it exited without listening.
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        async def read_stderr() -> None:
            # Read to the end, always: a daemon whose stderr pipe fills up would stall.
            assert process.stderr is not None
            async for raw in process.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                daemon.log.append(line)
                async with daemon.logging:
                    daemon.logging.notify_all()
                if line.startswith(READY) and not ready.done():
                    ready.set_result(line.removeprefix(READY))
            if not ready.done():
                ready.set_result(None)

        readers.append(asyncio.ensure_future(read_stderr()))
        address = await asyncio.wait_for(ready, TIMEOUT)
        if address is None:
            await asyncio.wait_for(process.wait(), TIMEOUT)
        else:
            daemon.address = address
        return daemon

    yield start
    for daemon in daemons:
        # Hang up first, and collect how each connection ended: a client reset by a killed
        # daemon would otherwise die with an exception nobody retrieved.
        for client in daemon.clients:
            client.writer.close()
        endings = asyncio.gather(*(c.receiving for c in daemon.clients), return_exceptions=True)
        await asyncio.wait_for(endings, TIMEOUT)
        if daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
    await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), TIMEOUT)


@pytest.fixture(params=["unix", "tcp"])
def address(request: pytest.FixtureRequest, socket_directory: Path) -> str:
    """A unix socket path or a free TCP port on the loopback interface."""
    if request.param == "unix":
        return f"unix:{socket_directory / 'engine.sock'}"
    return "tcp:127.0.0.1:0"
