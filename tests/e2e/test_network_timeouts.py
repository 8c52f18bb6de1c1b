"""Network stores never hang their clients: a dead or mute PostgreSQL or daemon fails in time.

Real servers throughout: the session's PostgreSQL (stopped and started again by one test), real
daemon processes (one paused with SIGSTOP, so it holds its connections without answering), and
a plain socket server that accepts connections and never says a word.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.adapters.remote.storage import RemoteStorage, State
from lazy_memory.engine.errors import StorageUnavailable
from tests.e2e.conftest import Lazy
from tests.e2e.silent_server import silent_server
from tests.support.daemon import add_token, running_daemon
from tests.support.jsonrpc import RawClient
from tests.support.postgres import PostgresServer, fresh_project, unused_port

BOUND_SECONDS = 10.0
"""A generous limit on what the (much shorter) timeouts under test must end within."""
STORAGE_UNAVAILABLE = -32014


@pytest.mark.parametrize("backend", ["postgres", "remote"])
def test_a_mute_store_fails_each_command_within_the_connect_timeout(
    lazy: Lazy, backend: str
) -> None:
    with silent_server() as port:
        environment = {"LAZY_STORAGE": backend, "LAZY_CONNECT_TIMEOUT": "1"}
        if backend == "postgres":
            environment["LAZY_PG_DSN"] = f"postgresql://lazy@127.0.0.1:{port}/memory"
            expected = (
                f"cannot reach PostgreSQL at 127.0.0.1:{port}/memory: no answer within 1 s "
                "(connect_timeout_seconds)"
            )
        else:
            environment |= {"LAZY_REMOTE": f"tcp:127.0.0.1:{port}", "LAZY_TOKEN": "lzm_any"}
            expected = (
                f"cannot reach the lazy-memory daemon at tcp:127.0.0.1:{port}: it accepted the "
                "connection but did not answer initialize within 1 s (connect_timeout_seconds); "
                f"is `lazy engine --listen tcp:127.0.0.1:{port}` running?"
            )

        started = time.monotonic()
        listed = lazy("memory", "list", environment=environment)
        listed_in = time.monotonic() - started
        context = lazy("memory", "context", environment=environment)

    assert (listed.returncode, listed.stderr) == (7, f"lazy: error: {expected}\n")
    assert listed_in < BOUND_SECONDS
    assert context.returncode == 0
    assert context.stdout.startswith(f"MEMORY INDEX UNAVAILABLE ({expected})\n")


async def test_postgres_that_is_down_fails_within_the_connect_timeout(tmp_path: Path) -> None:
    port = unused_port()
    settings = Settings(
        root=tmp_path,
        data_dir=tmp_path / "data",
        backend="postgres",
        pg_dsn=f"postgresql://lazy@127.0.0.1:{port}/memory",
        connect_timeout_seconds=0.15,
    )
    storage = await open_storage(settings)
    try:
        started = time.monotonic()
        with pytest.raises(StorageUnavailable) as raised:
            await storage.list_records()
        # Retried until the next try would start past the timeout, not for the whole backoff
        # (over 1.5 s): ten times the timeout is still well short of that.
        assert time.monotonic() - started < 1.5
    finally:
        await storage.aclose()
    assert raised.value.message == (
        f"cannot reach PostgreSQL at 127.0.0.1:{port}/memory: connection refused"
    )


async def test_a_daemon_that_stops_answering_is_dropped_and_reconnected_to_later(
    tmp_path: Path,
) -> None:
    data = tmp_path / "daemon-data"
    token = add_token(data, "engine")
    with running_daemon(data, f"unix:{tmp_path / 'd.sock'}") as daemon:
        settings = Settings(
            root=tmp_path,
            data_dir=tmp_path / "data",
            backend="remote",
            remote=daemon.address,
            token=token,
            connect_timeout_seconds=1,
            request_timeout_seconds=1,
        )
        storage = await open_storage(settings)
        assert isinstance(storage, RemoteStorage)
        try:
            assert await storage.list_records() == []
            daemon.process.send_signal(signal.SIGSTOP)
            try:
                with pytest.raises(StorageUnavailable) as mute:
                    await asyncio.wait_for(storage.list_records(), BOUND_SECONDS)
                assert storage.state is State.DISCONNECTED
                # Reconnecting to the paused daemon: the kernel takes the connection, nobody
                # answers initialize.
                with pytest.raises(StorageUnavailable) as unanswered:
                    await asyncio.wait_for(storage.list_records(), BOUND_SECONDS)
            finally:
                daemon.process.send_signal(signal.SIGCONT)

            # Dropped by the client: the daemon sees it end as soon as it runs again.
            await wait_for_log(daemon.log, "connection 1 closed")
            assert await storage.list_records() == []
        finally:
            await storage.aclose()

    assert mute.value.message == (
        f"the daemon at {daemon.address} gave no answer to lazy/storage/list_records within "
        "1 s ([remote] request_timeout_seconds): dropped the connection, the next request "
        "opens a new one"
    )
    assert "it accepted the connection but did not answer initialize within 1 s" in (
        unanswered.value.message
    )


async def test_a_daemon_over_postgres_serves_the_outage_and_recovers_without_a_restart(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    data = tmp_path / "daemon-data"
    token = add_token(data, "builder", name="alice")
    environment = {
        "LAZY_STORAGE": "postgres",
        "LAZY_PG_DSN": postgres_server.dsn,
        "LAZY_PROJECT": fresh_project("outage"),
        "LAZY_CONNECT_TIMEOUT": "1",
    }
    path = tmp_path / "d.sock"
    with running_daemon(data, f"unix:{path}", environment=environment) as daemon:
        process = daemon.process
        before = await connected_client(path, token)
        await before.result("lazy/memory/save", save_params("deploy", "make"))

        postgres_server.stop()
        try:
            during = await connected_client(path, token)
            answers = [
                await asyncio.wait_for(
                    client.request("lazy/memory/recall", {"name": "deploy"}), BOUND_SECONDS
                )
                for client in (before, during)
            ]
            saving = await asyncio.wait_for(
                during.request("lazy/memory/save", save_params("later")), BOUND_SECONDS
            )
            assert process.poll() is None
        finally:
            postgres_server.start()

        for answer in [*answers, saving]:
            assert answer["error"]["code"] == STORAGE_UNAVAILABLE, answer
            assert answer["error"]["message"].startswith(
                f"cannot reach PostgreSQL at 127.0.0.1:{postgres_server.port}/postgres: "
            )
        for client in (before, during):
            recalled = await client.result("lazy/memory/recall", {"name": "deploy"})
            assert recalled["record"]["body"] == "make"
        saved = await during.result("lazy/memory/save", save_params("later"))
        assert saved["revision"] == 1
        after = await connected_client(path, token)
        assert (await after.result("lazy/memory/recall", {"name": "later"}))["record"]["name"] == (
            "later"
        )
        for client in (before, during, after):
            await client.close()
        assert process.poll() is None


def save_params(name: str, body: str = "b") -> dict[str, str]:
    """Params of a valid save."""
    return {"name": name, "type": "project", "description": f"about {name}", "body": body}


async def connected_client(path: Path, token: str) -> RawClient:
    """A client on a fresh connection to the daemon at unix:path, initialized with token."""
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), BOUND_SECONDS)
    client = RawClient(reader, writer)
    initialized = await client.initialize({"token": token})
    assert "result" in initialized, initialized
    return client


async def wait_for_log(log: list[str], text: str) -> None:
    """Wait (a generous while at most) until a line of log holds text."""
    for _ in range(int(BOUND_SECONDS / 0.05)):
        if any(text in line for line in log):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the daemon never logged {text!r}: {''.join(log)}")
