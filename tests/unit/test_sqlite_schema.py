"""The SQLite schema: migrations run once, in order, and give the expected tables."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lazy_memory.adapters.sqlite import SqliteStorage
from lazy_memory.adapters.sqlite_schema import MIGRATIONS
from lazy_memory.engine.errors import StorageUnavailable


async def test_a_new_store_records_every_migration_and_has_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await (await SqliteStorage.open(path)).aclose()
    await (await SqliteStorage.open(path)).aclose()

    with sqlite3.connect(path) as connection:
        applied = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
        tables = {
            row[0]: [column[1] for column in connection.execute(f"PRAGMA table_info({row[0]})")]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not row[0].startswith("sqlite_")
        }
        journal_mode = connection.execute("PRAGMA journal_mode").fetchone()[0]

    assert applied == [name for name, _ in MIGRATIONS]
    assert journal_mode == "wal"
    assert tables == {
        "schema_migrations": ["name", "applied_at"],
        "records": [
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
    }


async def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await (await SqliteStorage.open(path)).aclose()
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO schema_migrations VALUES ('0099_future', 'later')")

    with pytest.raises(StorageUnavailable, match=r"newer lazy-memory.*0099_future"):
        await SqliteStorage.open(path)
