"""The one way a test opens a fresh, empty store of a given backend: its settings, a handle on
it in this process, or the environment that points a `lazy` process at it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.ports import Storage
from tests.support.daemon import add_token, running_daemon
from tests.support.postgres import PostgresServer, fresh_project

BACKENDS = ("sqlite", "files", "postgres")
"""The backends that keep records themselves (remote is a daemon in front of one of these)."""

OpenStorage = Callable[[], Awaitable[Storage]]
"""Opens another handle on the store a test runs against (the conformance suite's open_store)."""


@contextmanager
def store_settings(
    backend: str,
    root: Path,
    data_dir: Path,
    request: pytest.FixtureRequest | None = None,
    label: str = "test",
) -> Iterator[Settings]:
    """Settings for a fresh, empty store of backend, for as long as the context lasts.

    For postgres, a fresh project key (labelled label) on the session's server, which the
    test's request gives; for remote, a real daemon on a unix socket in root serving a fresh
    SQLite store. The others keep their files in data_dir.
    """
    if backend == "postgres":
        assert request is not None, "postgres needs the test's request for its server fixture"
        server: PostgresServer = request.getfixturevalue("postgres_server")
        yield Settings(
            root=root,
            data_dir=data_dir,
            backend=backend,
            pg_dsn=server.dsn,
            project=fresh_project(label),
        )
        return
    if backend != "remote":
        yield Settings(root=root, data_dir=data_dir, backend=backend)
        return
    daemon_data = root / "daemon-data"
    token = add_token(daemon_data, "engine", name=label)
    with running_daemon(daemon_data, f"unix:{root / 'daemon.sock'}") as daemon:
        yield Settings(
            root=root, data_dir=data_dir, backend=backend, remote=daemon.address, token=token
        )


def store_environment(settings: Settings) -> dict[str, str]:
    """The LAZY_* variables that point a `lazy` process at the store of settings (LAZY_DATA
    aside: the test's own data directory)."""
    variables = {
        "LAZY_STORAGE": settings.backend,
        "LAZY_PG_DSN": settings.pg_dsn,
        "LAZY_PROJECT": settings.project,
        "LAZY_REMOTE": settings.remote,
        "LAZY_TOKEN": settings.token,
    }
    return {variable: value for variable, value in variables.items() if value is not None}


async def open_store(
    backend: str, directory: Path, request: pytest.FixtureRequest | None = None
) -> Storage:
    """A new, empty store of one of BACKENDS in directory (postgres: a fresh project on the
    session's server)."""
    with store_settings(backend, directory, directory, request, "reliability") as settings:
        return await open_storage(settings)


def backend_environment(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The LAZY_* variables that point a `lazy` process at a fresh store of one of BACKENDS."""
    with store_settings(backend, Path(), Path(), request, "reliability") as settings:
        return store_environment(settings)
