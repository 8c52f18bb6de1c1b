"""Every PostgreSQL fault a real server can be made to produce ends as a typed error or a retry.

Never JSON-RPC -32603 from the engine, never exit status 70 from the CLI: a client-side
driver error (no host matching target_session_attrs, a bad DSN option), a server-side one
(a statement timeout, a table dropped under the store), a backend terminated mid-read, a
server stopped mid-read, and a cached statement a schema change invalidated mid-write.
Classes no real server produces (ProtocolError, OutdatedSchemaCacheError, "another operation
is in progress") are injected in tests/unit/test_postgres_driver_errors.py.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from lazy_memory.adapters.postgres.storage import PostgresStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.records import RecordContent, RecordType
from tests.e2e.conftest import Lazy
from tests.support.actors import ALICE
from tests.support.clocks import T0
from tests.support.jsonrpc import RawClient
from tests.support.postgres import PostgresServer, fresh_project, wait_for_backend

NOTE = RecordContent(name="note", type=RecordType.USER, description="a note", body="body")
WAIT_SECONDS = 30.0
INTERNAL = (-32603, 70)
_databases = itertools.count(1)


@dataclass(frozen=True)
class Fault:
    """A way to make the server fail an operation, and the typed error that must result."""

    query: str
    """What the DSN adds (`?...`), if anything."""
    exit_status: int
    code: int
    says: str
    setup: str = ""
    """SQL run on the store's database once its schema exists (`;`-separated)."""
    hold_lock: bool = False
    """Whether another session holds the records table locked while the command runs."""


FAULTS = {
    "no-host-fits-target-session-attrs": Fault(
        "?target_session_attrs=read-only",
        7,
        -32014,
        "None of the hosts match the target attribute requirement",
    ),
    "a-bad-dsn-option": Fault("?sslmode=bogus", 4, -32017, "`sslmode` parameter must be one of"),
    "a-statement-timeout": Fault(
        "?statement_timeout=500",
        7,
        -32014,
        "canceling statement due to statement timeout",
        hold_lock=True,
    ),
    "a-dropped-table": Fault(
        "",
        7,
        -32014,
        'relation "lazy_records" does not exist',
        setup="DROP TABLE lazy_records CASCADE",
    ),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
async def test_a_fault_is_one_typed_error_from_the_cli_and_the_engine(
    postgres_server: PostgresServer, lazy: Lazy, tmp_path: Path, fault: Fault
) -> None:
    dsn = fresh_database(postgres_server)
    environment = {
        "LAZY_STORAGE": "postgres",
        "LAZY_PG_DSN": dsn,
        "LAZY_PROJECT": fresh_project("faults"),
        "LAZY_CONNECT_TIMEOUT": "1",
    }
    created = lazy(
        "memory", "save", "note", "-t", "user", "-d", "d", "--body", "b", environment=environment
    )
    assert created.returncode == 0, created.stderr
    environment["LAZY_PG_DSN"] = dsn + fault.query
    async with provoked(dsn, fault):
        listed = lazy("memory", "list", environment=environment)
        answer = await engine_answer(environment, tmp_path)

    assert listed.returncode not in INTERNAL
    assert listed.returncode == fault.exit_status, listed.stderr
    assert listed.stderr.startswith("lazy: error: ")
    assert fault.says in listed.stderr
    assert len(listed.stderr.splitlines()) == 1
    assert answer["error"]["code"] not in INTERNAL
    assert answer["error"]["code"] == fault.code, answer
    assert fault.says in answer["error"]["message"]


async def test_a_read_whose_backend_is_terminated_is_retried(
    postgres_server: PostgresServer,
) -> None:
    dsn = fresh_database(postgres_server)
    async with opened(dsn) as storage, locked(dsn) as admin:
        await storage.save_record(NOTE, actor=ALICE, at=T0)
        await admin.execute("BEGIN; LOCK TABLE lazy_records IN ACCESS EXCLUSIVE MODE")
        reading = asyncio.ensure_future(storage.list_records())
        pid = await wait_for_backend(admin, "wait_event_type = 'Lock'")
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
        await admin.execute("COMMIT")
        records = await asyncio.wait_for(reading, WAIT_SECONDS)

    assert [record.name for record in records] == ["note"]


async def test_a_write_whose_cached_statement_a_schema_change_invalidated_is_retried(
    postgres_server: PostgresServer,
) -> None:
    dsn = fresh_database(postgres_server)
    async with opened(dsn) as storage, locked(dsn) as admin:
        await storage.save_record(NOTE, actor=ALICE, at=T0)
        # The write's statements are prepared and cached on its pooled connection; a column
        # changing type makes PostgreSQL refuse the cached plan inside the transaction.
        await admin.execute("ALTER TABLE lazy_records ALTER COLUMN revision TYPE bigint")
        saved = await storage.save_record(NOTE, actor=ALICE, at=T0)
        history = await storage.history()

    assert saved.revision == 2
    assert [entry.revision for entry in history] == [1, 2]


async def test_a_server_stopped_mid_read_is_storage_unavailable_then_recovers(
    postgres_server: PostgresServer,
) -> None:
    async with opened(postgres_server.dsn, connect_timeout=1.0) as storage:
        await storage.save_record(NOTE, actor=ALICE, at=T0)
        async with locked(postgres_server.dsn) as admin:
            await admin.execute("BEGIN; LOCK TABLE lazy_records IN ACCESS EXCLUSIVE MODE")
            reading = asyncio.ensure_future(storage.list_records())
            await wait_for_backend(admin, "wait_event_type = 'Lock'")
            try:
                postgres_server.stop()
                with pytest.raises(StorageUnavailable, match=r"^cannot reach PostgreSQL at "):
                    await asyncio.wait_for(reading, WAIT_SECONDS)
            finally:
                postgres_server.start()
        records = await storage.list_records()

    assert [record.name for record in records] == ["note"]


def fresh_database(server: PostgresServer) -> str:
    """The DSN of a new, empty database on the test server (its schema is this test's)."""
    return server.create_database(f"faults_{os.getpid()}_{next(_databases)}")


@asynccontextmanager
async def opened(dsn: str, connect_timeout: float = 2.0) -> AsyncIterator[PostgresStorage]:
    """A store on dsn, closed afterwards."""
    storage = await PostgresStorage.open(dsn, fresh_project("faults"), connect_timeout)
    try:
        yield storage
    finally:
        await storage.aclose()


@asynccontextmanager
async def locked(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A session of its own on dsn, for locking, altering and terminating."""
    admin = await asyncpg.connect(dsn)
    try:
        yield admin
    finally:
        admin.terminate()


@asynccontextmanager
async def provoked(dsn: str, fault: Fault) -> AsyncIterator[None]:
    """The server state the fault needs, for the duration."""
    async with locked(dsn) as admin:
        for statement in filter(None, fault.setup.split(";")):
            await admin.execute(statement)
        if fault.hold_lock:
            await admin.execute("BEGIN; LOCK TABLE lazy_records IN ACCESS EXCLUSIVE MODE")
        yield


async def engine_answer(environment: dict[str, str], directory: Path) -> dict[str, Any]:
    """What `lazy engine` on stdio answers a named recall with, in the environment given.

    A named one: recalling the index answers an unreadable store with its marker, not an error.
    """
    engine = await RawClient.spawn(
        ["engine"],
        {**os.environ, **environment, "LAZY_DATA": str(directory / "engine-data")},
        directory / "engine.log",
    )
    try:
        assert "result" in await engine.initialize()
        answer = await engine.request("lazy/memory/recall", {"name": "note"})
        assert await engine.close() == 0
        return answer
    finally:
        await engine.kill()
