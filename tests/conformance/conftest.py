"""The conformance suite's fixtures: every test runs once per storage backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lazy_memory.adapters import BACKENDS, open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.ports import Storage
from tests.daemon import add_token, running_daemon
from tests.postgres import PostgresServer, fresh_project

OpenStorage = Callable[[], Awaitable[Storage]]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend under test; also exported as LAZY_STORAGE for writer subprocesses."""
    name: str = request.param
    monkeypatch.setenv("LAZY_STORAGE", name)
    return name


@pytest.fixture
def settings(
    request: pytest.FixtureRequest,
    backend: str,
    isolated_environment: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Settings]:
    """Settings for a fresh, empty store of the backend under test.

    For `postgres`, a fresh project key in the session's server; for `remote`, a real
    daemon on a unix socket serving a fresh SQLite store. The settings, and the environment
    writer subprocesses inherit, point at it.
    """
    if backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        project = fresh_project("conformance")
        monkeypatch.setenv("LAZY_PG_DSN", server.dsn)
        monkeypatch.setenv("LAZY_PROJECT", project)
        yield Settings(
            root=tmp_path,
            data_dir=isolated_environment,
            backend=backend,
            pg_dsn=server.dsn,
            project=project,
        )
        return
    if backend != "remote":
        yield Settings(root=tmp_path, data_dir=isolated_environment, backend=backend)
        return
    daemon_data = tmp_path / "daemon-data"
    token = add_token(daemon_data, "engine", name="conformance")
    with running_daemon(daemon_data, f"unix:{tmp_path / 'daemon.sock'}") as daemon:
        monkeypatch.setenv("LAZY_REMOTE", daemon.address)
        monkeypatch.setenv("LAZY_TOKEN", token)
        yield Settings(
            root=tmp_path,
            data_dir=isolated_environment,
            backend=backend,
            remote=daemon.address,
            token=token,
        )


@pytest.fixture
async def open_store(settings: Settings) -> AsyncIterator[OpenStorage]:
    """Open another handle on the same store (closed at the end of the test)."""
    opened: list[Storage] = []

    async def opener() -> Storage:
        storage = await open_storage(settings)
        opened.append(storage)
        return storage

    yield opener
    for storage in opened:
        await storage.aclose()


@pytest.fixture
async def storage(open_store: OpenStorage) -> Storage:
    """A handle on a fresh, empty store of the backend under test."""
    return await open_store()


class TickingClock:
    """A clock that reads one second later each time, from start: every write its own time."""

    def __init__(self, start: datetime) -> None:
        self.moment = start

    def now(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment
