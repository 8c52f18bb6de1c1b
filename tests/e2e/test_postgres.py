"""The postgres backend against a real server: schema, projects, faults and change notification."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest

from lazy_memory.adapters.postgres.schema import MIGRATIONS, MIGRATIONS_TABLE
from lazy_memory.adapters.postgres.storage import PostgresStorage
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.ports import Change
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from lazy_memory.engine.search_parser import parse_query
from tests.e2e.conftest import Lazy
from tests.support.actors import ALICE
from tests.support.clocks import T0_WITH_MICROSECONDS
from tests.support.jsonrpc import RawClient
from tests.support.postgres import PostgresServer, fresh_project, unused_port, wait_for_backend

NOTE = RecordContent(name="note", type=RecordType.USER, description="a note", body="body text")
WAIT_SECONDS = 30.0

OpenStore = Callable[..., Awaitable[PostgresStorage]]
_databases = itertools.count(1)


@pytest.fixture
async def open_store(postgres_server: PostgresServer) -> AsyncIterator[OpenStore]:
    """Open PostgresStorage handles (a fresh project unless named), closed after the test."""
    opened: list[PostgresStorage] = []

    async def opener(project: str | None = None, dsn: str | None = None) -> PostgresStorage:
        storage = await PostgresStorage.open(
            dsn or postgres_server.dsn, project or fresh_project("e2e")
        )
        opened.append(storage)
        return storage

    yield opener
    for storage in opened:
        await storage.aclose()


def fresh_database(server: PostgresServer) -> str:
    """The DSN of a new, empty database on the test server."""
    return server.create_database(f"test_{os.getpid()}_{next(_databases)}")


async def test_a_new_database_gets_every_migration_once_even_from_concurrent_opens(
    postgres_server: PostgresServer, open_store: OpenStore
) -> None:
    dsn = fresh_database(postgres_server)
    stores = [await open_store(dsn=dsn) for _ in range(4)]
    await asyncio.gather(*(store.list_records() for store in stores))

    connection = await asyncpg.connect(dsn)
    try:
        migrations = await connection.fetch(f"SELECT name FROM {MIGRATIONS_TABLE}")
        columns = await connection.fetch(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        )
        primary_keys = await connection.fetch(
            "SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc "
            "JOIN information_schema.key_column_usage kcu USING (constraint_name, table_name) "
            "WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = 'public' "
            "ORDER BY tc.table_name, kcu.ordinal_position"
        )
    finally:
        await connection.close()

    assert [row["name"] for row in migrations] == [name for name, _ in MIGRATIONS]
    tables: dict[str, list[str]] = {}
    for row in columns:
        tables.setdefault(row["table_name"], []).append(row["column_name"])
    assert tables == {
        MIGRATIONS_TABLE: ["name", "applied_at"],
        "lazy_records": [
            "project",
            "name",
            "type",
            "description",
            "body",
            "provenance",
            "revision",
            "deleted",
            "updated_at",
            "actor_kind",
            "actor_detail",
            "search",
            "search_length",
        ],
        "lazy_projects": ["project", "last_seq"],
        "lazy_history": [
            "project",
            "seq",
            "name",
            "revision",
            "operation",
            "type",
            "description",
            "body",
            "provenance",
            "at",
            "actor_kind",
            "actor_detail",
        ],
        "lazy_compacts": ["project", "content"],
    }
    keys: dict[str, list[str]] = {}
    for row in primary_keys:
        keys.setdefault(row["table_name"], []).append(row["column_name"])
    # Every table is keyed by project, so one database serves many.
    assert keys == {
        MIGRATIONS_TABLE: ["name"],
        "lazy_records": ["project", "name"],
        "lazy_projects": ["project"],
        "lazy_history": ["project", "seq"],
        "lazy_compacts": ["project"],
    }


async def test_a_database_a_newer_version_wrote_is_refused(
    postgres_server: PostgresServer, open_store: OpenStore
) -> None:
    dsn = fresh_database(postgres_server)
    await (await open_store(dsn=dsn)).list_records()
    connection = await asyncpg.connect(dsn)
    await connection.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES ('0099_future')")
    await connection.close()

    newer = await open_store(dsn=dsn)
    with pytest.raises(StorageUnavailable, match=r"newer lazy-memory.*0099_future"):
        await newer.list_records()


async def test_two_projects_in_one_database_never_see_each_other(open_store: OpenStore) -> None:
    first, second = await open_store(), await open_store()
    await first.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)
    await first.save_record(
        NOTE.model_copy(update={"body": "v2"}), actor=ALICE, at=T0_WITH_MICROSECONDS
    )
    await second.save_record(
        NOTE.model_copy(update={"body": "theirs"}), actor=ALICE, at=T0_WITH_MICROSECONDS
    )
    await second.save_record(
        NOTE.model_copy(update={"name": "only-theirs"}), actor=ALICE, at=T0_WITH_MICROSECONDS
    )
    await first.remove_record("note", actor=ALICE, at=T0_WITH_MICROSECONDS)
    compact = Compact(
        preamble="p",
        summary="s",
        generator="mechanical",
        generated_at=T0_WITH_MICROSECONDS,
        generated_by=ALICE,
        watermark={"note": 2},
    )
    await first.put_compact(compact)

    assert await first.list_records() == []
    assert [(r.name, r.revision, r.body) for r in await second.list_records()] == [
        ("note", 1, "theirs"),
        ("only-theirs", 1, "body text"),
    ]
    assert [(e.revision, e.operation) for e in await first.history()] == [
        (1, Operation.SAVE),
        (2, Operation.SAVE),
        (3, Operation.REMOVE),
    ]
    assert len(await second.history()) == 2
    assert await first.removed_since({"note": 2}) == ["note"]
    assert await second.removed_since({"note": 1}) == []
    assert await second.live_revisions() == {"note": 1, "only-theirs": 1}
    assert {hit.name for hit in await second.search(parse_query("theirs"), 10)} == {
        "note",
        "only-theirs",
    }
    assert await first.search(parse_query("theirs"), 10) == []
    assert await first.get_compact() == compact
    assert await second.get_compact() is None


def test_a_server_that_is_down_is_one_line_and_launches_get_the_unavailable_marker(
    lazy: Lazy,
) -> None:
    port = unused_port()
    down = {
        "LAZY_STORAGE": "postgres",
        "LAZY_PG_DSN": f"postgresql://lazy@127.0.0.1:{port}/memory",
    }

    listed = lazy("memory", "list", environment=down)
    context = lazy("memory", "context", environment=down)

    expected = f"cannot reach PostgreSQL at 127.0.0.1:{port}/memory: connection refused"
    assert listed.returncode == 7
    assert listed.stderr == f"lazy: error: {expected}\n"
    assert context.returncode == 0
    assert context.stdout.startswith(f"MEMORY INDEX UNAVAILABLE ({expected})\n")


def test_a_missing_or_malformed_dsn_is_a_configuration_error(lazy: Lazy) -> None:
    missing = lazy("memory", "list", environment={"LAZY_STORAGE": "postgres"})
    malformed = lazy(
        "memory",
        "list",
        environment={"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": "host=db dbname=memory"},
    )

    assert (missing.returncode, malformed.returncode) == (4, 4)
    assert missing.stderr.startswith("lazy: error: the postgres backend needs a DSN: set ")
    assert malformed.stderr.startswith("lazy: error: the PostgreSQL DSN (LAZY_PG_DSN or ")


async def test_a_server_restart_mid_session_is_retried_and_the_feed_reconnects(
    postgres_server: PostgresServer, open_store: OpenStore
) -> None:
    project = fresh_project("restart")
    storage, other = await open_store(project), await open_store(project)
    changes: list[Change] = []
    await storage.subscribe(changes.append)
    await storage.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)

    postgres_server.restart()

    assert [record.revision for record in await storage.list_records()] == [1]
    assert (await storage.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)).revision == 2
    assert [entry.revision for entry in await storage.history()] == [1, 2]
    # Writes committed while the feed reconnects go unannounced; once it is back, they are.
    for _ in range(int(WAIT_SECONDS / 0.5)):
        revision = (await other.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)).revision
        if await eventually(lambda last=revision: changes[-1].revision == last, seconds=0.5):
            break
    else:
        raise AssertionError("the change feed never came back")
    assert changes[0] == Change(name="note", revision=1, operation=Operation.SAVE)


async def test_a_write_cut_off_before_commit_is_retried_and_applied_once(
    postgres_server: PostgresServer, open_store: OpenStore
) -> None:
    project = fresh_project("cut")
    storage = await open_store(project)
    await storage.list_records()
    blocker = await asyncpg.connect(postgres_server.dsn)
    try:
        # Hold the name's lock so the save waits inside its transaction, then cut it off.
        await blocker.execute(
            "SELECT pg_advisory_lock(hashtext($1), hashtext($2))", project, NOTE.name
        )
        saving = asyncio.ensure_future(
            storage.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)
        )
        pid = await wait_for_backend(blocker, "wait_event_type = 'Lock'")
        await blocker.execute("SELECT pg_terminate_backend($1)", pid)
        await blocker.execute(
            "SELECT pg_advisory_unlock(hashtext($1), hashtext($2))", project, NOTE.name
        )
        saved = await asyncio.wait_for(saving, WAIT_SECONDS)
    finally:
        await blocker.close()

    assert saved.revision == 1
    assert [entry.revision for entry in await storage.history()] == [1]


async def test_a_connection_lost_during_commit_says_the_write_may_not_have_happened(
    postgres_server: PostgresServer, open_store: OpenStore
) -> None:
    dsn = fresh_database(postgres_server)
    storage = await open_store(dsn=dsn)
    await storage.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)
    admin = await asyncpg.connect(dsn)
    try:
        # A deferred constraint trigger runs inside COMMIT: the backend is cut off there.
        await admin.execute(
            "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_sleep(60); RETURN NULL; END $$"
        )
        await admin.execute(
            "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON lazy_history "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()"
        )
        saving = asyncio.ensure_future(
            storage.save_record(
                NOTE.model_copy(update={"body": "v2"}), actor=ALICE, at=T0_WITH_MICROSECONDS
            )
        )
        pid = await wait_for_backend(admin, "wait_event = 'PgSleep'")
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
        with pytest.raises(StorageUnavailable, match="it may or may not have been applied"):
            await asyncio.wait_for(saving, WAIT_SECONDS)
        await admin.execute("DROP TRIGGER slow_commit ON lazy_history")
    finally:
        await admin.close()

    # Nothing half-written: the record row and its history entry went together (here, not at all).
    assert (await storage.recall_record("note")).body == "body text"
    assert [entry.revision for entry in await storage.history()] == [1]
    assert (await storage.save_record(NOTE, actor=ALICE, at=T0_WITH_MICROSECONDS)).revision == 2


async def test_two_engines_on_one_database_see_and_announce_each_others_writes(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    shared = {
        **os.environ,
        "LAZY_STORAGE": "postgres",
        "LAZY_PG_DSN": postgres_server.dsn,
        "LAZY_PROJECT": fresh_project("engines"),
    }
    engines = [
        await RawClient.spawn(
            ["engine"],
            {**shared, "LAZY_DATA": str(tmp_path / f"data-{n}"), "LAZY_ACTOR": f"builder-{n}"},
            tmp_path / f"engine-{n}.log",
        )
        for n in (1, 2)
    ]
    try:
        for engine in engines:
            assert "result" in await engine.initialize()
        first, second = engines

        saved = await first.result(
            "lazy/memory/save",
            {"name": "deploy", "type": "project", "description": "How we deploy", "body": "make"},
        )

        assert await next_notification(second, "lazy/memory/changed") == {
            "jsonrpc": "2.0",
            "method": "lazy/memory/changed",
            "params": {"name": "deploy", "revision": 1, "operation": "save"},
        }
        recalled = await second.result("lazy/memory/recall", {"name": "deploy"})
        assert {**recalled["record"], "outcome": "created"} == saved
        assert recalled["record"]["updated_by"] == {"kind": "builder", "detail": "builder-1"}
        for engine in engines:
            assert await engine.close() == 0
    finally:
        for engine in engines:
            await engine.kill()


async def next_notification(client: RawClient, method: str) -> dict[str, object]:
    """The next message from the server that is a notification of method."""
    while True:
        message = await client.next_unsolicited()
        if message.get("method") == method:
            return message


async def eventually(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll condition for up to seconds; whether it came to hold."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()
