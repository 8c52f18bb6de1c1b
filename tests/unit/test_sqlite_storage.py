"""The SQLite backend's own promises: index reads never touch bodies, and a locked database
is waited out off the event loop, for as long as the busy timeout and no longer."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lazy_memory.adapters.sqlite import access as sqlite_access
from lazy_memory.adapters.sqlite import checkpoint as sqlite_checkpoint
from lazy_memory.adapters.sqlite import index as sqlite_index
from lazy_memory.adapters.sqlite import tables as sqlite_tables
from lazy_memory.adapters.sqlite.schema import MIGRATIONS
from lazy_memory.adapters.sqlite.space import CRISIS_SEGMENTS
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.clocks import NOON


def content(name: str) -> RecordContent:
    return RecordContent(name=name, type=RecordType.PROJECT, description="d", body="b" * 5000)


async def created(path: Path) -> None:
    """Create the store at path: its first write does, since opening only reads."""
    storage = await SqliteStorage.open(path)
    await storage.clear_compact()
    await storage.aclose()


@contextmanager
def write_lock_held(path: Path, seconds: float) -> Iterator[threading.Thread]:
    """Another connection (as another process would) holds the write lock for seconds."""
    taken = threading.Event()

    def hold() -> None:
        connection = sqlite3.connect(path, isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
        taken.set()
        time.sleep(seconds)
        connection.execute("ROLLBACK")
        connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    try:
        yield holder
    finally:
        holder.join()


async def test_the_live_index_migration_gives_a_covering_index(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await created(path)

    with sqlite3.connect(path) as connection:
        applied = [row[0] for row in connection.execute("SELECT name FROM schema_migrations")]
        columns = [row[2] for row in connection.execute("PRAGMA index_info(records_live_index)")]

    assert applied == [name for name, _ in MIGRATIONS]
    assert "0006_live_index_updated_at" in applied
    assert columns == ["deleted", "name", "type", "description", "revision", "updated_at"]


async def test_the_search_index_merges_after_each_write_not_inside_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await created(path)

    with sqlite3.connect(path) as connection:
        settings = dict(connection.execute("SELECT k, v FROM records_fts_config"))

    assert settings["automerge"] == 0
    assert settings["crisismerge"] == CRISIS_SEGMENTS


async def test_the_index_reads_never_touch_the_records_table(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await created(path)

    with sqlite3.connect(path) as connection:
        for sql in (
            sqlite_index.INDEX_QUERY,
            sqlite_tables.LIVE_REVISIONS_QUERY,
            sqlite_index.REMOVED_QUERY,
        ):
            plan = " ".join(row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "COVERING INDEX records_live_index" in plan, (sql, plan)
            assert "TEMP B-TREE" not in plan, (sql, plan)


async def test_a_save_waits_out_another_writer_without_blocking_the_event_loop(
    storage: SqliteStorage, tmp_path: Path
) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    try:
        with write_lock_held(tmp_path / "memory.db", 0.5):
            start = time.monotonic()
            saved = await storage.save_record(content("waited"), actor=ALICE, at=NOON)
            waited = time.monotonic() - start
    finally:
        ticking.cancel()

    assert saved.revision == 1
    assert waited >= 0.3
    assert ticks >= 10, "the event loop was blocked while the save waited for the lock"
    assert [entry.name for entry in await storage.list_index()] == ["waited"]


async def test_a_lock_held_past_the_busy_timeout_fails_the_save_and_writes_nothing(
    storage: SqliteStorage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_access, "BUSY_TIMEOUT_SECONDS", 0.2)

    with (
        write_lock_held(tmp_path / "memory.db", 1.0),
        pytest.raises(StorageUnavailable, match="database is locked"),
    ):
        await storage.save_record(content("late"), actor=ALICE, at=NOON)

    assert await storage.history() == []
    saved = await storage.save_record(content("late"), actor=ALICE, at=NOON)
    assert saved.revision == 1


async def test_the_wal_is_checkpointed_in_the_background_after_enough_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_checkpoint, "CHECKPOINT_WRITES", 5)
    path = tmp_path / "memory.db"
    await created(path)
    storage = await SqliteStorage.open(path)
    try:
        size_before = path.stat().st_size
        for number in range(4):
            await storage.save_record(content(f"record-{number}"), actor=ALICE, at=NOON)
        assert path.stat().st_size == size_before, "nothing is checkpointed before 5 writes"

        await storage.save_record(content("record-4"), actor=ALICE, at=NOON)
        running = storage._checkpointer._running
        assert running is not None
        await running

        assert path.stat().st_size > size_before + 5 * 5000, "the records reached the database"
    finally:
        await storage.aclose()
