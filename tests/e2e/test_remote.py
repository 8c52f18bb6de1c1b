"""The remote backend against a real daemon: a clear error while it is down, then reconnection."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lazy_memory.adapters.remote.storage import RemoteStorage, State
from lazy_memory.engine.errors import PermissionDenied, StorageUnavailable
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.daemon import add_token, running_daemon

NOTE = RecordContent(name="note", type=RecordType.USER, description="d", body="b")


async def test_a_daemon_that_goes_away_and_comes_back(tmp_path: Path) -> None:
    data, socket = tmp_path / "daemon-data", tmp_path / "d.sock"
    token = add_token(data, "engine")
    with running_daemon(data, f"unix:{socket}") as daemon:
        storage = await RemoteStorage.open(daemon.address, token, None)
        await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
        assert daemon.stop() == 0

    with pytest.raises(StorageUnavailable, match=r"cannot reach the lazy-memory daemon at unix:"):
        await storage.list_records()
    assert storage.state is State.DISCONNECTED

    with running_daemon(data, f"unix:{socket}"):
        records = await storage.list_records()
        assert [record.name for record in records] == ["note"]
        assert storage.state is State.READY
        await storage.aclose()


async def test_a_daemon_that_is_down_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StorageUnavailable, match=r"is `lazy engine --listen unix:.*` running\?"):
        await RemoteStorage.open(f"unix:{tmp_path / 'nobody.sock'}", "lzm_x", None)


@pytest.mark.parametrize("role", ["builder", "human"])
async def test_only_an_engine_token_may_use_the_storage_methods(tmp_path: Path, role: str) -> None:
    data = tmp_path / "daemon-data"
    token = add_token(data, role)
    with running_daemon(data, f"unix:{tmp_path / 'd.sock'}") as daemon:
        storage = await RemoteStorage.open(daemon.address, token, None)
        with pytest.raises(PermissionDenied, match="needs an engine token"):
            await storage.list_records()
        with pytest.raises(PermissionDenied, match="needs an engine token"):
            await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
        await storage.aclose()


async def test_an_agent_token_may_only_read_through_the_storage_methods(tmp_path: Path) -> None:
    data = tmp_path / "daemon-data"
    writer = add_token(data, "engine")
    agent = add_token(data, "agent", task="t1")
    with running_daemon(data, f"unix:{tmp_path / 'd.sock'}") as daemon:
        storage = await RemoteStorage.open(daemon.address, writer, None)
        await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
        await storage.aclose()
        storage = await RemoteStorage.open(daemon.address, agent, None)
        assert [record.name for record in await storage.list_records()] == ["note"]
        with pytest.raises(PermissionDenied, match="agent tokens are read-only"):
            await storage.save_record(NOTE, actor=ALICE, at=datetime.now(UTC))
        with pytest.raises(PermissionDenied, match="agent tokens are read-only"):
            await storage.clear_compact()
        await storage.aclose()


async def test_a_bad_token_is_refused_at_open(tmp_path: Path) -> None:
    data = tmp_path / "daemon-data"
    add_token(data, "engine")
    with (
        running_daemon(data, f"unix:{tmp_path / 'd.sock'}") as daemon,
        pytest.raises(PermissionDenied, match="refused LAZY_TOKEN"),
    ):
        await RemoteStorage.open(daemon.address, "lzm_wrong", None)
