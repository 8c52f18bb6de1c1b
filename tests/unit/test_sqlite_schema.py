"""The SQLite schema: migrations run once, in order, and give the expected tables."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lazy_memory.adapters.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_parser import parse_query
from tests.support.actors import ALICE


async def created(path: Path) -> None:
    """Create the store at path: its first write does, since opening only reads."""
    storage = await SqliteStorage.open(path)
    await storage.clear_compact()
    await storage.aclose()


async def test_a_new_store_records_every_migration_and_has_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await created(path)
    await created(path)

    with sqlite3.connect(path) as connection:
        applied = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
        tables = {
            row[0]: [column[1] for column in connection.execute(f"PRAGMA table_info({row[0]})")]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            # FTS5 owns the shadow tables of its index.
            if not row[0].startswith(("sqlite_", "records_fts_"))
        }
        others = set(connection.execute("SELECT type, name FROM sqlite_master"))
        journal_mode = connection.execute("PRAGMA journal_mode").fetchone()[0]

    assert applied == [name for name, _ in MIGRATIONS]
    assert journal_mode == "wal"
    assert tables == {
        "schema_migrations": ["name", "applied_at"],
        "records": [
            "id",
            "name",
            "type",
            "description",
            "body",
            "revision",
            "deleted",
            "updated_at",
            "actor_kind",
            "actor_detail",
            "provenance",
        ],
        "history": [
            "seq",
            "name",
            "revision",
            "operation",
            "type",
            "description",
            "body",
            "at",
            "actor_kind",
            "actor_detail",
            "provenance",
        ],
        "compact": ["slot", "content"],
        "records_fts": ["name", "description", "body"],
    }
    assert {
        ("view", "live_records"),
        ("trigger", "records_fts_after_insert"),
        ("trigger", "records_fts_after_update"),
        ("trigger", "records_fts_after_delete"),
    } <= others


async def test_the_schema_version_is_kept_and_a_store_from_before_it_gets_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    await created(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        connection.execute("PRAGMA user_version = 0")  # as every store was before it was kept

    await created(path)

    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        applied = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
    assert applied == [name for name, _ in MIGRATIONS]


async def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await created(path)
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO schema_migrations VALUES ('0099_future', 'later')")

    with pytest.raises(StorageUnavailable, match=r"newer lazy-memory.*0099_future"):
        await SqliteStorage.open(path)


async def test_the_search_migration_keeps_every_row_and_indexes_the_live_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for name, statements in MIGRATIONS[:3]:
            for statement in statements:
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations VALUES (?, 'earlier')", (name,))
        for name, deleted in (("zebra-live", 0), ("zebra-removed", 1), ("another", 0)):
            connection.execute(
                "INSERT INTO records (name, type, description, body, revision, deleted, "
                "updated_at, actor_kind, actor_detail) VALUES "
                "(?, 'project', 'About zebras', 'stripes', 2, ?, '2026-11-30T08:00:00+00:00', "
                "'human', 'alice')",
                (name, deleted),
            )

    storage = await SqliteStorage.open(path)
    try:
        live = [record.name for record in await storage.list_records()]
        found = [hit.name for hit in await storage.search(parse_query("zebras"), 10)]
        revived = await storage.save_record(
            RecordContent(name="zebra-removed", type=RecordType.USER, description="d", body="b"),
            actor=ALICE,
            at=datetime(2026, 11, 30, tzinfo=UTC),
        )
    finally:
        await storage.aclose()

    assert live == ["another", "zebra-live"]
    assert found == ["another", "zebra-live"]
    assert revived.revision == 3, "the revisions survived the rebuild of records"
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO records_fts (records_fts) VALUES ('integrity-check')")


async def test_the_index_stays_right_through_writes_and_vacuum(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    at = datetime(2026, 11, 30, tzinfo=UTC)
    storage = await SqliteStorage.open(path)
    try:
        for number in range(20):
            content = RecordContent(
                name=f"note-{number}", type=RecordType.PROJECT, description="zebra", body="b"
            )
            await storage.save_record(content, actor=ALICE, at=at)
        for number in range(0, 20, 2):
            await storage.remove_record(f"note-{number}", actor=ALICE, at=at)
        with sqlite3.connect(path) as connection:
            connection.execute("VACUUM")
            # Checks the index against its content, the live records.
            connection.execute("INSERT INTO records_fts (records_fts) VALUES ('integrity-check')")
        found = [hit.name for hit in await storage.search(parse_query("zebra"), 50)]
    finally:
        await storage.aclose()

    assert sorted(found) == sorted(f"note-{number}" for number in range(1, 20, 2))
