"""Reading a SQLite or files store needs no write access: it creates nothing, takes no write
lock, works on a read-only file system and beside another process's writes, and every
failure is a typed StorageUnavailable. Real stores, real mounts (root only), real processes.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.sqlite import access as sqlite_access
from lazy_memory.adapters.sqlite.schema import MIGRATIONS
from lazy_memory.engine.errors import NotFound, StorageUnavailable
from tests.support.mounts import remount, small_tmpfs
from tests.unit.store_reading import (
    ALICE,
    EMPTY,
    T0,
    WRITTEN,
    compact,
    content,
    every_read,
    failures_reading,
    files_on_disk,
    holds,
    read_only_view,
    settings,
    store_process,
    written_store,
)

BACKENDS = ("sqlite", "files")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_store_that_does_not_exist_reads_as_empty_and_is_not_created(
    backend: str, tmp_path: Path
) -> None:
    data = tmp_path / "project" / ".lazy"
    storage = await open_storage(settings(backend, data))
    try:
        first = await every_read(storage)
        second = await every_read(storage)
    finally:
        await storage.aclose()

    holds(first, EMPTY)
    assert second["marker"] == first["marker"]
    assert not (tmp_path / "project").exists()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("write", ["save", "remove", "put_compact", "clear_compact"])
async def test_the_first_write_creates_the_store(backend: str, write: str, tmp_path: Path) -> None:
    data = tmp_path / "project" / ".lazy"
    storage = await open_storage(settings(backend, data))
    try:
        await every_read(storage)
        assert not (tmp_path / "project").exists()
        if write == "save":
            await storage.save_record(content("alpha"), actor=ALICE, at=T0)
        elif write == "remove":
            with pytest.raises(NotFound):
                await storage.remove_record("alpha", actor=ALICE, at=T0)
        elif write == "put_compact":
            await storage.put_compact(compact())
        else:
            await storage.clear_compact()
    finally:
        await storage.aclose()

    assert data.is_dir()
    if backend == "sqlite":
        with sqlite3.connect(data / "memory.db") as connection:
            applied = [name for (name,) in connection.execute("SELECT name FROM schema_migrations")]
        assert applied == [name for name, _ in MIGRATIONS]
    reopened = await open_storage(settings(backend, data))
    try:
        answers = await every_read(reopened)
    finally:
        await reopened.aclose()
    assert [name for name, _, _ in answers["records"]] == (["alpha"] if write == "save" else [])


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reading_a_store_changes_no_file_in_it(backend: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    await written_store(backend, data)
    before = files_on_disk(data)

    readers = [await open_storage(settings(backend, data)) for _ in range(2)]
    try:
        for reader in readers:
            holds(await every_read(reader), WRITTEN)
        during = files_on_disk(data)
    finally:
        for reader in readers:
            await reader.aclose()

    assert during == before
    assert files_on_disk(data) == before
    if backend == "sqlite":
        assert list(before) == [".gitignore", "memory.db"]  # both from the first write


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reads_do_not_wait_for_another_process_holding_the_write_lock(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were a read to wait for the lock, it would fail after this long instead of answering.
    monkeypatch.setattr(sqlite_access, "BUSY_TIMEOUT_SECONDS", 2.0)
    data = tmp_path / "data"
    await written_store(backend, data)
    with store_process(backend, data) as other:
        assert other.ask("lock") == "locked"
        start = time.monotonic()
        storage = await open_storage(settings(backend, data))
        try:
            answers = await every_read(storage)
        finally:
            await storage.aclose()
        took = time.monotonic() - start
        other.close()

    holds(answers, WRITTEN)
    assert took < 1.5, f"the reads took {took:.2f} s beside the lock"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_store_on_a_read_only_file_system_is_read_and_refuses_writes(
    backend: str, tmp_path: Path
) -> None:
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        data = disk / "data"
        await written_store(backend, data)
        before = files_on_disk(data)
        remount(disk, "ro")
        try:
            storage = await open_storage(settings(backend, data))
            try:
                answers = await every_read(storage)
                with pytest.raises(StorageUnavailable) as refused:
                    await storage.save_record(content("late"), actor=ALICE, at=T0)
                after_refusal = await every_read(storage)
            finally:
                await storage.aclose()
        finally:
            remount(disk, "rw")
        assert files_on_disk(data) == before

    holds(answers, WRITTEN)
    holds(after_refusal, WRITTEN)
    assert str(data) in refused.value.message
    assert "\n" not in refused.value.message


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_read_only_view_follows_another_processs_writes(
    backend: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    await written_store(backend, data)
    with (
        store_process(backend, data) as other,
        read_only_view(data, tmp_path / "view") as view,
    ):
        assert other.ask("save first") == "saved 1"
        storage = await open_storage(settings(backend, view))
        try:
            seen = await every_read(storage)
            assert other.ask("save second") == "saved 1"
            later = await every_read(storage)
        finally:
            await storage.aclose()
        other.close()

    assert set(seen["live"]) == {"alpha", "gamma", "first"}
    assert set(later["live"]) == {"alpha", "gamma", "first", "second"}
    assert later["marker"] != seen["marker"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_reader_sees_the_store_another_process_creates_and_writes(
    backend: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    storage = await open_storage(settings(backend, data))
    try:
        empty = await every_read(storage)
        with store_process(backend, data) as other:
            assert other.ask("save elsewhere") == "saved 1"
            other.close()
        written = await every_read(storage)
    finally:
        await storage.aclose()

    holds(empty, EMPTY)
    assert written["live"] == {"elsewhere": 1}
    assert written["marker"] != empty["marker"]


SQLITE_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda _: b"\x00garbage{",
    "random pages": lambda _: os.urandom(3 * 4096),
    "cut short": lambda data: data[: len(data) // 2],
    "pages overwritten": lambda data: data[:4096] + os.urandom(len(data) - 4096),
}
FILES_DAMAGE = {
    "memories.json": b"\x00garbage{",
    # A line that names no record: it may be any one's latest entry (a line naming its
    # record is only that record's trouble: tests/conformance/test_unreadable_rows.py).
    "memory-history.json": b'{"title": "alpha", "revision": "not a number"}\n',
    "memory-compact.json": b"[1, 2",
}


@pytest.mark.parametrize("damage", sorted(SQLITE_DAMAGE))
async def test_a_damaged_sqlite_store_is_storage_unavailable(damage: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    await written_store("sqlite", data)
    database = data / "memory.db"
    database.write_bytes(SQLITE_DAMAGE[damage](database.read_bytes()))

    failures = await failures_reading(settings("sqlite", data))

    assert failures, "the damage went unnoticed"
    for failure in failures:
        assert str(database) in failure
    assert sorted(os.listdir(data)) == [".gitignore", "memory.db"], "reading created files"


@pytest.mark.parametrize("damaged", sorted(FILES_DAMAGE))
async def test_a_damaged_files_store_is_storage_unavailable(damaged: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    await written_store("files", data)
    (data / damaged).write_bytes(FILES_DAMAGE[damaged])

    failures = await failures_reading(settings("files", data))

    assert failures, "the damage went unnoticed"
    for failure in failures:
        assert str(data) in failure
