"""The daemon under idle and hostile clients: a cap, the timeouts, big strangers and memory.

A real `lazy engine --listen` with short limits in its project's lazy.toml, real unix
sockets, and the daemon's own VmRSS from /proc.
"""

from __future__ import annotations

import asyncio
import json
import resource
import select
import shutil
import socket
import tempfile
import time
from collections.abc import Awaitable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.remote import RemoteStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType
from lazy_memory.wire.framing import frame
from tests.daemon import Daemon, add_token, running_daemon
from tests.e2e.jsonrpc import RawClient

HANDSHAKE_SECONDS = 4.0
IDLE_SECONDS = 2.0
MAX_CONNECTIONS = 200
SOCKETS = 1000
COMPACT_SECONDS = 5
LIMITS = f"""
[engine]
handshake_timeout_seconds = {HANDSHAKE_SECONDS}
idle_timeout_seconds = {IDLE_SECONDS}
max_connections = {MAX_CONNECTIONS}

[compact]
command = "sleep {COMPACT_SECONDS}"
"""
REFUSAL = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32000,
        "message": f"the daemon has {MAX_CONNECTIONS} connections open, the limit "
        "([engine] max_connections): try later",
    },
}
RSS_SLACK_KIB = 4 * 1024
"""How far above its baseline the daemon's RSS may stay once every client has left."""
ACTOR = Actor(kind=ActorKind.HUMAN, detail="alice")
NOTE = RecordContent(name="note", type=RecordType.USER, description="d", body="b")


@pytest.fixture
def socket_path() -> Iterator[Path]:
    """A unix socket path short enough for the kernel (about 100 bytes at most)."""
    directory = Path(tempfile.mkdtemp(prefix="lzl-"))
    yield directory / "engine.sock"
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose lazy.toml sets short limits; the daemon runs in it."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "lazy.toml").write_text(LIMITS, encoding="utf-8")
    return root


@pytest.fixture
def enough_files() -> None:
    """Room for a thousand sockets here and in the daemon, which inherits the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = SOCKETS * 2 + 256
    if soft < wanted:
        # Root may raise the hard limit too; anyone else gets what the hard limit allows.
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(hard, wanted)))


async def test_a_thousand_idle_sockets_are_capped_timed_out_and_leave_no_memory_behind(
    tmp_path: Path, project: Path, socket_path: Path, enough_files: None
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "builder")
    with running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon:
        await use_once(socket_path, token)
        baseline = await settled_rss(daemon)

        sockets, opened_at = await asyncio.to_thread(open_sockets, socket_path, SOCKETS)
        try:
            peak = rss_kib(daemon)
            watching = asyncio.ensure_future(
                asyncio.to_thread(wait_for_endings, sockets, HANDSHAKE_SECONDS + 30)
            )
            # A client of the remote backend, refused too, is told why.
            with pytest.raises(StorageUnavailable) as full:
                await RemoteStorage.open(daemon.address, token, None, connect_timeout=1.0)
            endings = await watching
        finally:
            for connected in sockets:
                connected.close()
        left = await settled_rss(daemon)
        logged = "".join(daemon.log)

    refused = [n for n, (said, _) in endings.items() if said]
    timed_out = [n for n, (said, _) in endings.items() if not said]
    # Over the cap: the one message, then closed at once; under it: held, silent, until the
    # handshake timeout closes it (nothing was sent on it). Had a held one been closed
    # before the last socket connected, one more would have been let in.
    assert len(refused) == SOCKETS - MAX_CONNECTIONS
    assert all(json.loads(endings[n][0]) == REFUSAL for n in refused)
    assert len(timed_out) == MAX_CONNECTIONS
    for n in timed_out:
        assert HANDSHAKE_SECONDS - 0.5 <= endings[n][1] - opened_at[n] <= HANDSHAKE_SECONDS + 20
    # The remote backend tried up to three times.
    assert 1 <= logged.count("refused a connection from") - len(refused) <= 3
    assert f"{MAX_CONNECTIONS} connections open, the limit ([engine] max_connections)" in (
        full.value.message
    )
    assert logged.count("timed out: no initialize with a valid token within 4 s") == (
        MAX_CONNECTIONS
    )
    assert left - baseline <= RSS_SLACK_KIB, (baseline, peak, left)


async def test_a_refused_client_reads_why_though_it_wrote_first_and_writes_after(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    """A client sends `initialize` as soon as it connects, so the daemon refuses a connection
    with the client's bytes unread. Closed so, a socket is reset (the client's read fails
    where the refusal was) and a write after the close fails (the client's transport with
    it): either way the remote backend said "Connection lost" instead of why."""
    limits = LIMITS.replace(f"max_connections = {MAX_CONNECTIONS}", "max_connections = 1")
    (project / "lazy.toml").write_text(limits, encoding="utf-8")
    data = tmp_path / "data"
    token = add_token(data, "builder")
    with (
        running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon,
        socket.socket(socket.AF_UNIX) as held,
        socket.socket(socket.AF_UNIX) as refused,
    ):
        held.connect(str(socket_path))
        await wait_for_log(daemon, "connection 1 accepted")
        refused.connect(str(socket_path))
        refused.settimeout(10)
        refused.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        received = b""
        while chunk := refused.recv(65536):
            received += chunk
        refused.sendall(b"Content-Length: 2\r\n\r\n{}")
        with pytest.raises(StorageUnavailable) as full:
            await RemoteStorage.open(daemon.address, token, None, connect_timeout=1.0)

    said = json.loads(received.partition(b"\r\n\r\n")[2])
    assert said["error"]["message"] == REFUSAL["error"]["message"].replace(
        "200 connections", "1 connection"
    )
    assert "1 connection open, the limit ([engine] max_connections)" in full.value.message


async def test_a_connection_without_a_token_is_closed_at_the_handshake_timeout_however_busy(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    data = tmp_path / "data"
    add_token(data, "builder")
    with running_daemon(data, f"unix:{socket_path}", cwd=project):
        chatty = await raw_client(socket_path)
        started = time.monotonic()
        refusals = 0
        # Requests before initialize are answered (-32002) but never earn it more time.
        while not chatty.receiving.done() and time.monotonic() - started < HANDSHAKE_SECONDS + 20:
            try:
                response = await chatty.request("lazy/memory/recall")
            except ConnectionError:
                break
            assert response["error"]["code"] == -32002
            refusals += 1
            await asyncio.sleep(0.25)
        assert await chatty.closed_by_peer()
        lasted = time.monotonic() - started

    assert refusals >= 8
    assert HANDSHAKE_SECONDS - 0.5 <= lasted <= HANDSHAKE_SECONDS + 5


async def test_a_stranger_may_not_send_a_big_message_before_initialize(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "builder")
    with running_daemon(data, f"unix:{socket_path}", cwd=project):
        stranger = await raw_client(socket_path)
        await stranger.send_raw(b"Content-Length: 1000000\r\n\r\n" + b" " * 1000)
        refused = await stranger.next_error()
        assert await stranger.closed_by_peer()

        # Once initialized, the same size is only a message like any other.
        member = await raw_client(socket_path)
        assert "result" in await member.initialize({"token": token})
        big = {**save_params("big"), "description": "d" * 1_000_000}
        answered = await member.request("lazy/memory/save", big)

    assert refused["error"]["code"] == -32700
    assert "before initialize: the limit is 262144 bytes" in refused["error"]["message"]
    assert answered["error"]["code"] != -32700


async def test_idle_connections_time_out_unless_they_speak_or_wait_for_an_answer(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "builder")
    with running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon:
        idle = await member(socket_path, token)
        chatty = await member(socket_path, token)
        waiting = await member(socket_path, token)
        await idle.result("lazy/memory/save", save_params("note"))
        started = time.monotonic()
        idle_closed = asyncio.ensure_future(closed_at(idle))
        compacting = asyncio.ensure_future(timed(waiting.request("lazy/memory/compact", {})))
        keeping = asyncio.ensure_future(keep_alive(chatty))
        try:
            compacted, answered = await compacting
            waiting_closed = await closed_at(waiting)
            chatty_records = (await chatty.result("lazy/memory/recall"))["records"]
            logged = "".join(daemon.log)
        finally:
            keeping.cancel()

    assert IDLE_SECONDS - 0.5 <= await idle_closed - started <= IDLE_SECONDS + 5
    assert [record["name"] for record in chatty_records] == ["note"]
    # The compaction outlived the idle timeout twice over and still got its answer; the
    # idle time of its connection counts from that answer.
    assert answered - started >= COMPACT_SECONDS - 0.5
    assert "result" in compacted or compacted["error"]["code"] not in (-32603, -32700)
    assert IDLE_SECONDS - 0.5 <= waiting_closed - answered <= IDLE_SECONDS + 5
    assert logged.count(f"timed out: idle for {IDLE_SECONDS:g} s") == 2


async def test_many_initialized_clients_that_time_out_leave_no_memory_behind(
    tmp_path: Path, project: Path, socket_path: Path, enough_files: None
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "builder")
    with running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon:
        await use_once(socket_path, token)
        baseline = await settled_rss(daemon)
        clients = [await member(socket_path, token) for _ in range(MAX_CONNECTIONS)]
        peak = rss_kib(daemon)
        closed = await asyncio.gather(*(client.closed_by_peer() for client in clients))
        for client in clients:
            client.writer.close()
        left = await settled_rss(daemon)

    assert all(closed)
    # The high-water mark of an allocator that is not compacted: a few MB, then no more.
    assert left - baseline <= 2 * RSS_SLACK_KIB, (baseline, peak, left)


async def test_the_remote_backend_reconnects_after_an_idle_timeout(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "engine")
    with running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon:
        storage = await RemoteStorage.open(daemon.address, token, None)
        try:
            await storage.save_record(NOTE, actor=ACTOR, at=datetime.now(UTC))
            await wait_for_log(daemon, f"timed out: idle for {IDLE_SECONDS:g} s")
            # The client saw the daemon close the connection: the write goes on a new one.
            saved = await storage.save_record(NOTE, actor=ACTOR, at=datetime.now(UTC))
            # A client too busy to notice the close (its loop blocked): the write must still
            # not go out on the dead connection, where it might or might not be applied.
            # (The daemon looks for idleness from the handshake deadline on.)
            block_the_loop(HANDSHAKE_SECONDS + IDLE_SECONDS + 1)
            again = await storage.save_record(NOTE, actor=ACTOR, at=datetime.now(UTC))
            history = await storage.history("note")
        finally:
            await storage.aclose()

    assert (saved.revision, again.revision) == (2, 3)
    assert [entry.revision for entry in history] == [1, 2, 3]


def save_params(name: str) -> dict[str, str]:
    """Params of a valid save."""
    return {"name": name, "type": "project", "description": f"about {name}", "body": "b"}


async def raw_client(path: Path) -> RawClient:
    """A raw client on a fresh connection to the daemon's socket."""
    reader, writer = await asyncio.open_unix_connection(str(path))
    return RawClient(reader, writer)


async def member(path: Path, token: str) -> RawClient:
    """A client initialized with token."""
    client = await raw_client(path)
    assert "result" in await client.initialize({"token": token})
    return client


async def use_once(path: Path, token: str) -> None:
    """What one client does (initialize, save, read, leave), so the baseline is warm."""
    client = await member(path, token)
    await client.result("lazy/memory/save", save_params("warm-up"))
    await client.result("lazy/memory/recall")
    assert await client.close() is None


async def timed(request: Awaitable[dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """A response, and when it came (monotonic)."""
    response = await request
    return response, time.monotonic()


async def keep_alive(client: RawClient) -> None:
    """Send a notification the engine ignores twice a second, until cancelled."""
    while True:
        await client.notify("$/lazy/keepAlive")
        await asyncio.sleep(0.5)


async def closed_at(client: RawClient) -> float:
    """When the daemon closed client's connection (monotonic)."""
    assert await client.closed_by_peer()
    return time.monotonic()


def block_the_loop(seconds: float) -> None:
    """Keep this process's event loop from running, as a busy client would."""
    time.sleep(seconds)


def rss_kib(daemon: Daemon) -> int:
    """The daemon's resident set size, from /proc."""
    status = Path(f"/proc/{daemon.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1])


async def settled_rss(daemon: Daemon) -> int:
    """The daemon's RSS once it has stopped falling (the daemon frees within a second)."""
    last = rss_kib(daemon)
    for _ in range(20):
        await asyncio.sleep(1.0)
        now = rss_kib(daemon)
        if now >= last:
            return now
        last = now
    return last


def open_sockets(path: Path, count: int) -> tuple[list[socket.socket], list[float]]:
    """count connections that send nothing, and when each was made (monotonic)."""
    sockets, opened_at = [], []
    for _ in range(count):
        connected = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Blocking: a unix connect waits while the listen backlog is full.
        connected.connect(str(path))
        connected.setblocking(False)
        sockets.append(connected)
        opened_at.append(time.monotonic())
    return sockets, opened_at


def wait_for_endings(sockets: list[socket.socket], within: float) -> dict[int, tuple[bytes, float]]:
    """For each socket, what the daemon sent before closing it and when it closed."""
    poller = select.poll()
    by_fd = {connected.fileno(): n for n, connected in enumerate(sockets)}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    received: dict[int, bytes] = {n: b"" for n in range(len(sockets))}
    endings: dict[int, tuple[bytes, float]] = {}
    deadline = time.monotonic() + within
    while len(endings) < len(sockets) and time.monotonic() < deadline:
        for fd, _ in poller.poll(100):
            n = by_fd[fd]
            chunk = sockets[n].recv(65536)
            if chunk:
                received[n] += chunk
                continue
            poller.unregister(fd)
            endings[n] = (received[n].partition(b"\r\n\r\n")[2], time.monotonic())
    return endings


async def wait_for_log(daemon: Daemon, text: str) -> None:
    """Wait until the daemon has logged text."""
    for _ in range(200):
        if text in "".join(daemon.log):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the daemon never logged {text!r}")
