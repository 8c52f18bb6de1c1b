"""The daemon's front door (rpc/jsonrpc/front_door.py): strangers never take a token holder's place.

A real `lazy engine --listen` with small caps in its project's lazy.toml, a crowd of hostile
sockets (tests/support/hostile_crowd.py: silent, trickling and reconnecting, each reconnecting as
soon as it is dropped) in a process of its own, and clients with tokens that must be served
every time. Before the door, strangers and members shared `max_connections`: such a crowd
let a token holder in a few times in forty.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import ssl
import sys
import tempfile
from asyncio.subprocess import Process
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from lazy_memory.adapters.remote.storage import RemoteStorage
from lazy_memory.engine.errors import StorageUnavailable
from tests.e2e.daemon.raw_daemon import save_params, self_signed_certificate
from tests.support.daemon import Daemon, add_token, running_daemon, wait_for_log
from tests.support.hostile_crowd import TRICKLE, opener
from tests.support.jsonrpc import RawClient

HANDSHAKE_SECONDS = 2.0
MAX_CONNECTIONS = 3
WAITING = 32
CROWD = 100
"""Of each kind: three hundred sockets, against 32 places to wait."""
SESSIONS = 10
LIMITS = f"""
[engine]
handshake_timeout_seconds = {HANDSHAKE_SECONDS}
max_connections = {MAX_CONNECTIONS}
max_unauthenticated_connections = {WAITING}
"""
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose lazy.toml sets small caps; the daemon runs in it."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "lazy.toml").write_text(LIMITS, encoding="utf-8")
    return root


@pytest.fixture(params=["unix", "tcp"])
def listen(request: pytest.FixtureRequest) -> Iterator[str]:
    """A unix socket (a short path) or a free TCP port on the loopback interface."""
    if request.param == "tcp":
        yield "tcp:127.0.0.1:0"
        return
    directory = Path(tempfile.mkdtemp(prefix="lzf-"))
    yield f"unix:{directory / 'engine.sock'}"
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The daemon's data directory."""
    return tmp_path / "data"


@pytest.fixture
def daemon(data: Path, project: Path, listen: str) -> Iterator[Daemon]:
    """The daemon, with a builder token made before it starts."""
    add_token(data, "builder", "warm-up")
    with running_daemon(data, listen, cwd=project) as running:
        yield running


async def start_crowd(daemon: Daemon) -> Process:
    """CROWD hostile sockets of each kind against the daemon, for five minutes at most."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.hostile_crowd",
        daemon.address,
        *("--silent", str(CROWD), "--trickling", str(CROWD), "--reconnecting", str(CROWD)),
        *("--seconds", "300"),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture
async def crowd(daemon: Daemon) -> AsyncIterator[Process]:
    """The crowd, once every place to wait is taken."""
    process = await start_crowd(daemon)
    await wait_for_log(daemon, "dropped to make room")
    yield process
    if process.returncode is None:
        process.kill()
    await process.wait()


async def test_a_token_holder_is_served_every_time_through_a_crowd(
    daemon: Daemon, data: Path, crowd: Process
) -> None:
    token = add_token(data, "builder", "steady")
    served = []
    for n in range(SESSIONS):
        client = await connect(daemon)
        initialized = await client.initialize({"token": token})
        assert "result" in initialized, (n, initialized)
        saved = await client.result("lazy/memory/save", save_params(f"note-{n}"))
        served.append(saved["revision"])
        assert await client.close() is None
    logged = "".join(daemon.log)

    assert served == [1] * SESSIONS
    # The crowd was there all along, every place taken.
    assert crowd.returncode is None
    assert f"dropped to make room: a newer connection took its place: {WAITING} were" in logged


async def test_a_token_holder_is_served_every_time_over_tls_through_a_crowd_in_handshakes(
    data: Path, project: Path, tmp_path: Path
) -> None:
    """Plain sockets against a TLS port never finish their TLS handshake: they wait in it,
    as many at most as may wait for a token, and the daemon drops the oldest no faster than
    it drops those (rpc/jsonrpc/listener.py), so a token holder's handshake is never cut short."""
    certificate, key = self_signed_certificate(tmp_path)
    trusting = ssl.create_default_context(cafile=str(certificate))
    token = add_token(data, "builder", "steady")
    tls = ("--tls-cert", str(certificate), "--tls-key", str(key))
    with running_daemon(data, "tls:127.0.0.1:0", *tls, cwd=project) as daemon:
        crowd = await start_crowd(daemon)
        try:
            await asyncio.sleep(HANDSHAKE_SECONDS)  # the crowd holds every place by now
            for n in range(SESSIONS):
                opening = opener(daemon.address, ssl=trusting, server_hostname="localhost")
                client = RawClient(*await asyncio.wait_for(opening(), 30))
                initialized = await client.initialize({"token": token})
                assert "result" in initialized, (n, initialized)
                assert await client.close() is None
            assert crowd.returncode is None
        finally:
            crowd.kill()
            await crowd.wait()


async def test_strangers_never_take_a_members_place_and_members_are_capped_alone(
    daemon: Daemon, data: Path, crowd: Process
) -> None:
    token = add_token(data, "builder", "steady")
    members = [await member(daemon, token) for _ in range(MAX_CONNECTIONS)]
    one_more = await connect(daemon)
    refused = await one_more.initialize({"token": token})
    refused_closed = await one_more.closed_by_peer()
    await wait_for_log(daemon, "refused: the daemon has 3 connections")  # the members' too
    last = member_numbers(daemon)[MAX_CONNECTIONS - 1]
    # A place freed is a member's again at once, crowd or not.
    assert await members.pop().close() is None
    await wait_for_log(daemon, f"connection {last} closed")
    members.append(await member(daemon, token))
    for client in members:
        recalled = await client.result("lazy/memory/recall")
        assert recalled["records"] == []

    assert refused["error"]["code"] == -32014
    assert refused["error"]["message"] == (
        "the daemon has 3 connections with a valid token open, the limit "
        "([engine] max_connections): try later"
    )
    assert refused["error"]["data"]["type"] == "DaemonFull"
    assert refused_closed


async def test_the_remote_backend_over_max_connections_says_why(daemon: Daemon, data: Path) -> None:
    token = add_token(data, "engine", "laptop")
    members = [await member(daemon, token) for _ in range(MAX_CONNECTIONS)]
    with pytest.raises(StorageUnavailable) as full:
        await RemoteStorage.open(daemon.address, token, None, connect_timeout=5)
    for client in members:
        await client.close()

    assert full.value.message == (
        "the daemon has 3 connections with a valid token open, the limit "
        "([engine] max_connections): try later"
    )


async def test_the_crowd_is_told_why_it_is_turned_away(daemon: Daemon, crowd: Process) -> None:
    await asyncio.sleep(HANDSHAKE_SECONDS * 2)  # past a handshake timeout for each kind
    crowd.terminate()  # the crowd prints its tally and exits
    output, _ = await asyncio.wait_for(crowd.communicate(), 30)
    tally = json.loads(output.splitlines()[-1]) if output.strip() else None

    assert tally is not None, "the crowd printed no tally"
    assert tally["dropped"] >= CROWD
    # Every connection the daemon ended was sent one error saying why first, but those
    # reset by the crowd itself (a reconnecting socket hanging up as it was dropped).
    assert tally["told_why"] >= tally["dropped"] * 0.9, tally


async def test_a_trickling_client_is_closed_at_the_handshake_timeout_and_told_why(
    daemon: Daemon,
) -> None:
    reader, writer = await opener(daemon.address)()
    started = asyncio.get_running_loop().time()
    closed = asyncio.ensure_future(reader.read())
    for byte in TRICKLE:
        writer.write(bytes([byte]))
        await asyncio.wait([closed], timeout=0.1)
        if closed.done():
            break
    lasted = asyncio.get_running_loop().time() - started
    writer.close()

    received = await closed
    assert received.startswith(b"Content-Length: "), (lasted, received, daemon.log[-5:])
    said = json.loads(received.partition(b"\r\n\r\n")[2])
    assert said["error"] == {
        "code": -32000,
        "message": "timed out: no initialize with a valid token within 2 s "
        "([engine] handshake_timeout_seconds)",
    }
    assert HANDSHAKE_SECONDS - 0.5 <= lasted <= HANDSHAKE_SECONDS + 20


async def connect(daemon: Daemon) -> RawClient:
    """A raw client on a fresh connection."""
    reader, writer = await asyncio.wait_for(opener(daemon.address)(), 30)
    return RawClient(reader, writer)


async def member(daemon: Daemon, token: str) -> RawClient:
    """A client initialized with token."""
    client = await connect(daemon)
    initialized = await client.initialize({"token": token})
    assert "result" in initialized, initialized
    return client


def member_numbers(daemon: Daemon) -> list[int]:
    """The numbers of the connections that initialized with a token, from the log."""
    lines = [line for line in daemon.log if "initialized with token" in line]
    return [int(line.split("connection ")[1].split()[0]) for line in lines]
