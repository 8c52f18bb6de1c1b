"""Driver errors no real server can be made to raise, injected where asyncpg hands them over.

ProtocolError, OutdatedSchemaCacheError (our queries return no composite types), the bare
InternalClientError, InterfaceError for a connection in the wrong state, and the client-side
errors that are final (an argument the driver cannot encode, a feature it or the server
lacks): a fake pool stands in for asyncpg's, and raises one where a query would. Each must
become a retry or a typed error, through the storage, the engine and the CLI, never -32603
or exit status 70. tests/e2e/test_postgres_server_faults.py provokes the rest on a real server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest
from asyncpg.exceptions import _base as driver

from lazy_memory.adapters.clock import SystemClock
from lazy_memory.adapters.postgres import retry as postgres_retry
from lazy_memory.adapters.postgres.schema import MIGRATIONS, MIGRATIONS_TABLE
from lazy_memory.adapters.postgres.storage import PostgresStorage
from lazy_memory.engine.errors import InvalidConfig, StorageUnavailable
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc.cli import main
from lazy_memory.rpc.jsonrpc.server import Grant, Session, build_server, serve_connection
from lazy_memory.wire.framing import frame
from tests.support.actors import ALICE
from tests.support.clocks import T0

NOTE = RecordContent(name="note", type=RecordType.USER, description="d", body="b")
DSN = "postgresql://lazy@127.0.0.1:5432/memory"

RETRIED = {
    "protocol-error": driver.ProtocolError("unexpected message type 'D' in state 3"),
    "outdated-schema-cache": driver.OutdatedSchemaCacheError(
        "unexpected number of attributes of composite type: 3, expected 2"
    ),
    "internal-client-error": driver.InternalClientError("_on_result: waiter is done"),
    "another-operation": asyncpg.InterfaceError(
        "cannot perform operation: another operation is in progress"
    ),
    "connection-closed": asyncpg.InterfaceError("connection is closed"),
}
"""A connection in a state nobody can vouch for: closed, and the operation tried again."""
FINAL = {
    "argument-encoding": driver.DataError("invalid input for query argument $2: 7 (expected str)"),
    "client-feature": driver.UnsupportedClientFeatureError("no binary codec for type x"),
    "server-feature": driver.UnsupportedServerFeatureError("server does not support x"),
}
"""What another try would only repeat: StorageUnavailable at once."""


class FakePool:
    """The part of asyncpg's pool PostgresStorage uses; its queries raise the faults given.

    Schema queries pass; each later query (or COMMIT, for faults given as commit faults)
    raises the next fault, until none is left. A connection is reused unless terminated.
    """

    def __init__(self, faults: list[BaseException], *, at_commit: bool = False) -> None:
        self.faults = list(faults)
        self.at_commit = at_commit
        self.opened: list[FakeConnection] = []
        self.free: list[FakeConnection] = []
        self.queries = 0

    def __await__(self) -> Generator[Any, None, FakePool]:
        """What `await asyncpg.create_pool(...)` gives."""
        return self._ready().__await__()

    async def _ready(self) -> FakePool:
        return self

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[FakeConnection]:
        """A free connection, or a new one."""
        connection = self.free.pop() if self.free else FakeConnection(self)
        if connection not in self.opened:
            self.opened.append(connection)
        try:
            yield connection
        finally:
            if not connection.terminated:
                self.free.append(connection)

    def is_closing(self) -> bool:
        """Never, in these tests."""
        return False

    async def close(self) -> None:
        """Nothing to close."""

    def terminate(self) -> None:
        """Nothing to cut."""

    def fault(self, *, commit: bool = False) -> None:
        """Raise the next fault, if this is where faults are raised."""
        if self.faults and commit == self.at_commit:
            raise self.faults.pop(0)


class FakeConnection:
    """A pooled connection: answers the store's queries with empty results."""

    def __init__(self, pool: FakePool) -> None:
        self.pool = pool
        self.terminated = False
        self.rolled_back = 0

    async def fetch(self, sql: str, *arguments: Any) -> list[dict[str, Any]]:
        if MIGRATIONS_TABLE in sql:
            return [{"name": name} for name, _ in MIGRATIONS]
        self._query(sql)
        return []

    async def fetchval(self, sql: str, *arguments: Any) -> None:
        self._query(sql)

    async def fetchrow(self, sql: str, *arguments: Any) -> None:
        self._query(sql)

    async def execute(self, sql: str, *arguments: Any) -> str:
        self._query(sql)
        return "OK"

    def transaction(self) -> FakeTransaction:
        return FakeTransaction(self)

    def terminate(self) -> None:
        self.terminated = True

    def _query(self, sql: str) -> None:
        assert not self.terminated, "a terminated connection was used again"
        if MIGRATIONS_TABLE in sql or sql == "SELECT pg_advisory_xact_lock($1)":
            return  # the schema check
        self.pool.queries += 1
        self.pool.fault()


class FakeTransaction:
    """A transaction on a fake connection."""

    def __init__(self, connection: FakeConnection) -> None:
        self.connection = connection

    async def start(self) -> None:
        assert not self.connection.terminated

    async def commit(self) -> None:
        self.connection.pool.fault(commit=True)

    async def rollback(self) -> None:
        self.connection.rolled_back += 1


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without their backoff: the policy is not under test here."""
    monkeypatch.setattr(postgres_retry, "FIRST_BACKOFF_SECONDS", 0.0)


def store(pool: FakePool) -> PostgresStorage:
    """A PostgreSQL store over the fake pool."""
    return PostgresStorage(pool, DSN, "project")  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", RETRIED.values(), ids=RETRIED.keys())
async def test_a_read_that_meets_a_spoiled_connection_is_retried_on_a_new_one(
    fault: BaseException,
) -> None:
    pool = FakePool([fault])

    records = await store(pool).list_records()

    assert records == []
    first, second = pool.opened
    assert first.terminated
    assert not second.terminated


@pytest.mark.parametrize("fault", RETRIED.values(), ids=RETRIED.keys())
async def test_a_write_that_meets_one_before_commit_is_retried_and_never_rolled_back_there(
    fault: BaseException,
) -> None:
    pool = FakePool([fault])

    saved = await store(pool).save_record(NOTE, actor=ALICE, at=T0)

    assert saved.revision == 1
    first, second = pool.opened
    assert first.terminated
    assert first.rolled_back == 0  # a spoiled connection is cut, not asked to roll back
    assert not second.terminated


@pytest.mark.parametrize("fault", RETRIED.values(), ids=RETRIED.keys())
async def test_a_write_that_meets_one_at_commit_says_it_may_not_have_been_applied(
    fault: BaseException,
) -> None:
    pool = FakePool([fault], at_commit=True)

    with pytest.raises(StorageUnavailable, match="it may or may not have been applied"):
        await store(pool).save_record(NOTE, actor=ALICE, at=T0)
    assert len(pool.opened) == 1


@pytest.mark.parametrize("fault", FINAL.values(), ids=FINAL.keys())
async def test_a_final_client_error_is_storage_unavailable_at_once(fault: BaseException) -> None:
    pool = FakePool([fault])

    with pytest.raises(StorageUnavailable, match=r"^cannot use PostgreSQL at 127.0.0.1:5432/"):
        await store(pool).list_records()
    assert pool.queries == 1
    assert not pool.opened[0].terminated


async def test_a_bad_dsn_option_is_a_configuration_error() -> None:
    fault = driver.ClientConfigurationError("`sslmode` parameter must be one of: disable")

    with pytest.raises(InvalidConfig, match=r"DSN .* cannot be used: `sslmode` parameter"):
        await store(FakePool([fault])).list_records()


EVERY = {**RETRIED, **FINAL, "dsn": driver.ClientConfigurationError("bad option")}


@pytest.mark.parametrize("fault", EVERY.values(), ids=EVERY.keys())
async def test_the_engine_answers_each_with_its_typed_error(fault: BaseException) -> None:
    # Every query fails: the retries run out too.
    pool = FakePool([fault] * 50)

    answer = await engine_answer(store(pool), "lazy/memory/recall", {"name": "deploy"})
    index = await engine_answer(store(FakePool([fault] * 50)), "lazy/memory/recall", {})

    expected = -32017 if isinstance(fault, driver.ClientConfigurationError) else -32014
    assert answer["error"]["code"] == expected, answer
    # The index a client shows is the marker, with the same typed error's message as why.
    assert index["result"]["records"] is None, index
    assert index["result"]["error"] == answer["error"]["message"]


@pytest.mark.parametrize("fault", EVERY.values(), ids=EVERY.keys())
def test_the_cli_exits_with_the_typed_errors_status(
    fault: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAZY_STORAGE", "postgres")
    monkeypatch.setenv("LAZY_PG_DSN", DSN)
    # Where PostgresStorage.open gets its pool: the driver boundary.
    monkeypatch.setattr(asyncpg, "create_pool", lambda *_a, **_k: FakePool([fault] * 50))

    status = main(["memory", "list"])

    expected = 4 if isinstance(fault, driver.ClientConfigurationError) else 7
    assert status == expected
    printed = capsys.readouterr().err
    assert printed.startswith("lazy: error: ")
    assert "internal error" not in printed


async def engine_answer(storage: PostgresStorage, method: str, params: Any) -> dict[str, Any]:
    """What an in-process engine over storage answers one request with."""
    identity = Identity(actor=ALICE)
    session = Session(
        storage,
        lambda who: MemoryService(storage, who, SystemClock()),
        lambda _options: Grant(identity),
    )
    server = build_server(session)
    reader = asyncio.StreamReader()
    written = bytearray()
    serving = asyncio.ensure_future(serve_connection(server, reader, written.extend))
    initialize: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
    reader.feed_data(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize})
    )
    reader.feed_data(frame({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}))
    try:
        for _ in range(500):
            answer = next((m for m in messages(bytes(written)) if m.get("id") == 2), None)
            if answer is not None:
                return answer
            await asyncio.sleep(0.01)
        raise AssertionError(f"no answer to {method}: {bytes(written)!r}")
    finally:
        reader.feed_eof()
        await asyncio.wait_for(serving, 10)


def messages(stream: bytes) -> list[dict[str, Any]]:
    """The framed JSON-RPC messages in stream."""
    found = []
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in header.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        found.append(json.loads(rest[:length]))
        stream = rest[length:]
    return found
