"""The SQLite backend's reads before a handle writes: a snapshot of a database nobody has open,
guarded by a reader's lock and given up for the WAL as soon as a writer arrives; the WAL a
crashed writer left, read on a read-only disk; a schema too old to read there."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.sqlite.reader import Reader
from lazy_memory.adapters.sqlite.schema import MIGRATIONS
from lazy_memory.engine.errors import StorageUnavailable
from tests.support.mounts import remount, small_tmpfs
from tests.unit.store_reading import (
    ALICE,
    T0,
    content,
    every_read,
    failures_reading,
    one_line,
    settings,
    store_process,
    written_store,
)


async def test_a_read_only_sqlite_store_a_crashed_writer_left_is_read_from_its_wal(
    tmp_path: Path,
) -> None:
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        data = disk / "data"
        await written_store("sqlite", data)
        with store_process("sqlite", data) as other:
            assert other.ask("save only-in-the-wal") == "saved 1"
            other.ask("crash")
        assert (data / "memory.db-wal").stat().st_size > 0
        remount(disk, "ro")
        try:
            storage = await open_storage(settings("sqlite", data))
            try:
                answers = await every_read(storage)
            finally:
                await storage.aclose()
        finally:
            remount(disk, "rw")

    assert answers["live"] == {"alpha": 2, "gamma": 1, "only-in-the-wal": 1}


async def test_a_sqlite_snapshot_sees_the_writes_of_a_process_that_came_and_went(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    await written_store("sqlite", data)
    storage = await open_storage(settings("sqlite", data))
    try:
        before = await every_read(storage)
        assert not (data / "memory.db-wal").exists(), "the reader created the WAL"
        for round_ in range(3):
            with store_process("sqlite", data) as other:
                assert other.ask(f"save visitor-{round_}") == "saved 1"
                other.close()
            # The reader's lock kept the last connection from checkpointing and deleting it.
            assert (data / "memory.db-wal").exists()
            after = await every_read(storage)
            assert set(after["live"]) == {"alpha", "gamma"} | {
                f"visitor-{number}" for number in range(round_ + 1)
            }
            assert after["marker"] != before["marker"]
            before = after
    finally:
        await storage.aclose()


async def test_a_snapshot_read_during_which_a_writer_arrives_is_read_again_through_the_wal(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    await written_store("sqlite", data)
    reader = Reader(data / "memory.db")
    seen: list[list[str]] = []
    with store_process("sqlite", data) as other:

        def live_names(connection: sqlite3.Connection) -> list[str]:
            query = "SELECT name FROM records WHERE deleted = 0 ORDER BY name"
            names = [name for (name,) in connection.execute(query)]
            if not seen:
                assert other.ask("save arrived") == "saved 1"  # in the middle of the read
            seen.append(names)
            return names

        try:
            answer = reader.read(live_names)
        finally:
            reader.close()
        other.close()

    assert seen[0] == ["alpha", "gamma"]
    assert answer == ["alpha", "arrived", "gamma"]


def posix_shared_locks(database: Path) -> list[str]:
    """This process's POSIX read locks on SQLite's shared bytes of database (/proc/locks),
    without the ordinal each line starts with: it moves as other processes' locks come and go."""
    inode = database.stat().st_ino
    return [
        line.split(":", 1)[1].strip()
        for line in Path("/proc/locks").read_text().splitlines()
        if " POSIX " in line
        and f" {os.getpid()} " in line
        and f":{inode} " in line
        and line.split()[-2] == str(0x40000002)
    ]


async def test_closing_a_reader_keeps_the_locks_its_processs_writer_holds(tmp_path: Path) -> None:
    # Closing any descriptor of a file drops the process's POSIX locks on it: the reader's
    # own lock descriptor must wait for the writer's connection to close first.
    data = tmp_path / "data"
    await written_store("sqlite", data)
    reader = await open_storage(settings("sqlite", data))
    writer = await open_storage(settings("sqlite", data))
    try:
        await reader.list_index()
        await writer.save_record(content("delta"), actor=ALICE, at=T0)
        held = posix_shared_locks(data / "memory.db")
        await reader.aclose()
        kept = posix_shared_locks(data / "memory.db")
    finally:
        await writer.aclose()
        await reader.aclose()

    assert held, "the writer's connection holds no shared lock"
    assert kept == held


def sqlite_store_without(data: Path, migrations: list[str]) -> None:
    """A SQLite store that applied every migration but these (which come last), with a record."""
    data.mkdir(parents=True)
    with sqlite3.connect(data / "memory.db", isolation_level=None) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(
            "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for name, statements in MIGRATIONS:
            if name in migrations:
                continue
            for statement in statements:
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations VALUES (?, 'earlier')", (name,))
        columns = "name, type, description, body, revision, deleted, updated_at, actor_kind"
        connection.execute(
            f"INSERT INTO records ({columns}, actor_detail) VALUES "
            "('old', 'project', 'd', 'b', 1, 0, '2026-11-30T08:00:00+00:00', 'human', 'alice')"
        )
    connection.close()


async def test_a_sqlite_store_too_old_to_read_on_a_read_only_disk_says_so(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        data = disk / "data"
        sqlite_store_without(data, [name for name, _ in MIGRATIONS[3:]])
        remount(disk, "ro")
        try:
            with pytest.raises(StorageUnavailable) as refused:
                await open_storage(settings("sqlite", data))
        finally:
            remount(disk, "rw")

    message = one_line(refused.value)
    assert str(data / "memory.db") in message
    assert "must be migrated (0004_search" in message
    assert "mounted read-only" in message


async def test_a_sqlite_store_lacking_only_index_migrations_reads_on_a_read_only_disk(
    tmp_path: Path,
) -> None:
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        data = disk / "data"
        sqlite_store_without(data, ["0005_live_index", "0006_live_index_updated_at"])
        remount(disk, "ro")
        try:
            storage = await open_storage(settings("sqlite", data))
            try:
                index = await storage.list_index()
            finally:
                await storage.aclose()
        finally:
            remount(disk, "rw")

    assert [(entry.name, entry.updated_at) for entry in index] == [("old", T0)]


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE records SET updated_at = 'yesterday' WHERE name = 'alpha'",
        "UPDATE records SET type = 'nonsense' WHERE name = 'alpha'",
        "UPDATE history SET at = 'yesterday' WHERE name = 'alpha'",
        "UPDATE records SET provenance = '{not json' WHERE name = 'alpha'",
    ],
)
async def test_a_row_changed_behind_the_stores_back_is_storage_unavailable(
    damage: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    await written_store("sqlite", data)
    with sqlite3.connect(data / "memory.db") as connection:
        connection.execute(damage)
    connection.close()

    failures = await failures_reading(settings("sqlite", data))

    assert failures, "the damaged row went unnoticed"
    assert all("holds a record it cannot read: 'alpha' (" in f for f in failures), failures
