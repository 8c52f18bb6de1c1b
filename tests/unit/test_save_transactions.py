"""A save on SQLite reads once and writes once: one read transaction, one write transaction,
through the service and through `lazy memory save`, which no longer reads the record itself.

The statements are counted with sqlite3's trace callback on every connection the store opens,
from a handle opened on a store that already holds the record (as each `lazy memory save`
process opens one). A write transaction is a `BEGIN IMMEDIATE`; a read transaction is a
statement run outside one, which SQLite runs as a transaction of its own. The pragmas that
set a connection up as it opens (its busy timeout, WAL mode, sync level, checkpoint
threshold) read nothing of the store and are not counted.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc.cli import main

BUILDER = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="builder-3"))
NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
_SETUP_PRAGMAS = ("busy_timeout", "journal_mode", "synchronous", "wal_autocheckpoint")


class FixedClock:
    def now(self) -> datetime:
        return NOON


class Transactions:
    """The transactions traced statements make, on every connection traced."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self._open: set[int] = set()

    def traced(self, connection: sqlite3.Connection) -> None:
        connection.set_trace_callback(partial(self._statement, id(connection)))

    def _statement(self, connection: int, statement: str) -> None:
        words = statement.split()
        verb = words[0].upper()
        if verb == "BEGIN":
            self._open.add(connection)
            self.writes.append(statement)
        elif verb in ("COMMIT", "ROLLBACK"):
            self._open.discard(connection)
        elif connection not in self._open and not _sets_up(words):
            self.reads.append(statement)


def _sets_up(words: list[str]) -> bool:
    return words[0].upper() == "PRAGMA" and words[1].split("=")[0] in _SETUP_PRAGMAS


@pytest.fixture
def transactions(monkeypatch: pytest.MonkeyPatch) -> Transactions:
    """Every connection opened from now on traced (sqlite3.connect, the real one, wrapped)."""
    counted = Transactions()
    connect = sqlite3.connect

    def traced_connect(*arguments: Any, **options: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*arguments, **options)
        counted.traced(connection)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced_connect)
    return counted


async def _store_holding(path: Path, name: str) -> None:
    storage = await SqliteStorage.open(path)
    try:
        await MemoryService(storage, BUILDER, FixedClock()).save(
            name, type="project", description="first", body="b"
        )
    finally:
        await storage.aclose()


async def test_an_update_runs_one_read_and_one_write_transaction(
    tmp_path: Path, transactions: Transactions
) -> None:
    path = tmp_path / "memory.db"
    await _store_holding(path, "deploy")
    storage = await SqliteStorage.open(path)
    service = MemoryService(storage, BUILDER, FixedClock())
    transactions.reads.clear()
    transactions.writes.clear()
    try:
        saved = await service.save("deploy", description="second")
    finally:
        await storage.aclose()

    assert (saved.revision, saved.description, saved.body) == (2, "second", "b")
    assert len(transactions.writes) == 1, transactions.writes
    assert len(transactions.reads) == 1, transactions.reads


def test_lazy_memory_save_reads_the_record_once_and_runs_one_write_transaction(
    isolated_environment: Path,
    transactions: Transactions,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["memory", "save", "deploy", "-t", "project", "-d", "first", "--body", "b"]) == 0
    transactions.reads.clear()
    asyncio.run(_open_and_close(isolated_environment / "memory.db"))
    opening = list(transactions.reads)
    transactions.reads.clear()
    transactions.writes.clear()

    assert main(["memory", "save", "deploy", "-d", "second"]) == 0

    assert capsys.readouterr().out.splitlines()[-1] == "updated deploy (project), revision 2"
    assert len(transactions.writes) == 1, transactions.writes
    # Opening the store reads its schema, as every command does; the save reads once.
    assert transactions.reads[: len(opening)] == opening
    assert len(transactions.reads) == len(opening) + 1, transactions.reads


async def _open_and_close(path: Path) -> None:
    storage = await SqliteStorage.open(path)
    await storage.aclose()
