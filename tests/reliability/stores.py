"""Real stores of each local backend for in-process tests, and what a store holds right now."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import HistoryEntry, Record
from tests.postgres import PostgresServer, fresh_project

BACKENDS = ("sqlite", "files", "postgres")
"""The backends that keep records themselves (remote is a daemon in front of one of these)."""


async def open_store(
    backend: str, directory: Path, request: pytest.FixtureRequest | None = None
) -> Storage:
    """A new, empty store of backend (postgres: a fresh project on the session's server)."""
    if backend == "sqlite":
        from lazy_memory.adapters.sqlite.storage import SqliteStorage

        return await SqliteStorage.open(directory / "memory.db")
    if backend == "files":
        from lazy_memory.adapters.files.storage import FileStorage

        return await FileStorage.open(directory / "files-store")
    if backend == "postgres":
        from lazy_memory.adapters.postgres.storage import PostgresStorage

        assert request is not None, "postgres needs the test's request for its server fixture"
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return await PostgresStorage.open(server.dsn, fresh_project("reliability"))
    raise AssertionError(f"unknown backend {backend}")


def backend_environment(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The LAZY_* variables that point a `lazy` process at a fresh store of backend."""
    if backend != "postgres":
        return {"LAZY_STORAGE": backend}
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return {
        "LAZY_STORAGE": "postgres",
        "LAZY_PG_DSN": server.dsn,
        "LAZY_PROJECT": fresh_project("reliability"),
    }


@dataclass(frozen=True)
class Snapshot:
    """Everything a store holds: live records, the whole history, and the compact slot."""

    records: list[Record]
    history: list[HistoryEntry]
    compact: Compact | None


async def snapshot(storage: Storage) -> Snapshot:
    """What storage holds now."""
    return Snapshot(
        records=await storage.list_records(),
        history=await storage.history(),
        compact=await storage.get_compact(),
    )
