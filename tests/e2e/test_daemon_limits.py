"""The daemon under idle and hostile clients: the caps, the timeouts, big strangers and memory.

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

from lazy_memory.adapters.remote.storage import RemoteStorage
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.daemon import (
    add_token,
    rss_kib,
    running_daemon,
    settled_rss,
    wait_for_log,
)
from tests.support.jsonrpc import RawClient

HANDSHAKE_SECONDS = 4.0
IDLE_SECONDS = 2.0
MAX_CONNECTIONS = 200
MAX_WAITING = 200
SOCKETS = 1000
COMPACT_SECONDS = 5
LIMITS = f"""
[engine]
handshake_timeout_seconds = {HANDSHAKE_SECONDS}
idle_timeout_seconds = {IDLE_SECONDS}
max_connections = {MAX_CONNECTIONS}
max_unauthenticated_connections = {MAX_WAITING}

[compact]
command = "sleep {COMPACT_SECONDS}"
"""
DROPPED = (
    f"dropped to make room: a newer connection took its place: {MAX_WAITING} were waiting "
    "for a token, the limit ([engine] max_unauthenticated_connections); send initialize "
    "with a valid token as soon as you connect"
)
TIMED_OUT = (
    f"timed out: no initialize with a valid token within {HANDSHAKE_SECONDS:g} s "
    "([engine] handshake_timeout_seconds)"
)
LOG_LINES_PER_SECOND = 25
"""What a flood may cost the log: 20 lines a second about strangers, their sum, and members."""
RSS_SLACK_KIB = 4 * 1024
"""How far above its baseline the daemon's RSS may stay once every client has left."""
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


async def test_a_thousand_idle_sockets_wait_apart_from_members_told_why_and_leave_no_memory(
    tmp_path: Path, project: Path, socket_path: Path, enough_files: None
) -> None:
    data = tmp_path / "data"
    token = add_token(data, "engine")
    with running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon:
        await use_once(socket_path, token)
        baseline = await settled_rss(daemon)
        started = time.monotonic()

        sockets, opened_at = await asyncio.to_thread(open_sockets, socket_path, SOCKETS)
        try:
            peak = rss_kib(daemon)
            watching = asyncio.ensure_future(
                asyncio.to_thread(wait_for_endings, sockets, HANDSHAKE_SECONDS + 30)
            )
            # A client of the remote backend, behind the thousand, is served.
            storage = await RemoteStorage.open(daemon.address, token, None, connect_timeout=30)
            try:
                saved = await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
            finally:
                await storage.aclose()
            endings = await watching
        finally:
            for connected in sockets:
                connected.close()
        left = await settled_rss(daemon)
        log_lines = len(daemon.log)
        lasted = time.monotonic() - started

    said = {n: json.loads(body)["error"]["message"] for n, (body, _) in endings.items()}
    dropped = [n for n, message in said.items() if message == DROPPED]
    timed_out = [n for n, message in said.items() if message == TIMED_OUT]
    # Every socket was told why it was closed: the oldest were dropped to make room for the
    # newer ones, the newest waited out the handshake timeout.
    assert len(endings) == SOCKETS
    assert len(dropped) + len(timed_out) == SOCKETS, set(said.values()) - {DROPPED, TIMED_OUT}
    assert SOCKETS - MAX_WAITING <= len(dropped) <= SOCKETS - MAX_WAITING + 1
    for n in timed_out:
        assert HANDSHAKE_SECONDS - 0.5 <= endings[n][1] - opened_at[n] <= HANDSHAKE_SECONDS + 20
    assert saved.revision == 1
    # The log says it in a few lines a second, not a line for each.
    assert log_lines <= LOG_LINES_PER_SECOND * (lasted + 1)
    assert left - baseline <= RSS_SLACK_KIB, (baseline, peak, left)


async def test_a_dropped_stranger_reads_why_though_it_wrote_first_and_writes_after(
    tmp_path: Path, project: Path, socket_path: Path
) -> None:
    """A stranger dropped to make room may have sent bytes the daemon never read. Closed so,
    a socket is reset (the client's read fails where the message was) and a write after the
    close fails (the client's transport with it): either way the client would not read why."""
    limits = LIMITS.replace(
        f"max_unauthenticated_connections = {MAX_WAITING}", "max_unauthenticated_connections = 1"
    )
    (project / "lazy.toml").write_text(limits, encoding="utf-8")
    data = tmp_path / "data"
    add_token(data, "builder")
    with (
        running_daemon(data, f"unix:{socket_path}", cwd=project) as daemon,
        socket.socket(socket.AF_UNIX) as stranger,
        socket.socket(socket.AF_UNIX) as newer,
    ):
        stranger.connect(str(socket_path))
        stranger.sendall(b"Content-Length: 90\r\n\r\n{")  # never a whole message
        await wait_for_log(daemon, "connection 1 accepted")
        newer.connect(str(socket_path))
        stranger.settimeout(10)
        received = b""
        while chunk := stranger.recv(65536):
            received += chunk
        stranger.sendall(b"Content-Length: 2\r\n\r\n{}")

    said = json.loads(received.partition(b"\r\n\r\n")[2])
    assert said["error"]["message"] == DROPPED.replace(f"{MAX_WAITING} were", "1 was")


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
            await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
            await wait_for_log(daemon, f"timed out: idle for {IDLE_SECONDS:g} s")
            # The client saw the daemon close the connection: the write goes on a new one.
            saved = await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
            # A client too busy to notice the close (its loop blocked): the write must still
            # not go out on the dead connection, where it might or might not be applied.
            # (The daemon looks for idleness from the handshake deadline on.)
            block_the_loop(HANDSHAKE_SECONDS + IDLE_SECONDS + 1)
            again = await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
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
