"""The SQLite backend's writer connection: the database created if need be, in WAL, migrated.

A store handle opens it at its first write (storage.py), never before: until then it only
reads (sqlite/reader.py), so reading a store creates nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from lazy_memory.adapters.data_dir import create_data_dir
from lazy_memory.adapters.migrations import unapplied
from lazy_memory.adapters.sqlite.connections import close, connect
from lazy_memory.adapters.sqlite.schema import MIGRATIONS
from lazy_memory.engine.errors import StorageUnavailable

AUTOCHECKPOINT_PAGES = 10_000
"""WAL pages at which a commit checkpoints by itself: a bound, for when no engine is writing."""

_T = TypeVar("_T")


def open_writer(path: Path) -> sqlite3.Connection:
    """A connection that writes the database at path, its folder and file created if need be,
    in WAL mode and migrated; sqlite3 errors (a busy database among them) go through."""
    try:
        create_data_dir(path.parent)
    except OSError as error:
        raise StorageUnavailable(
            f"cannot create the data directory {path.parent}: {error.strerror}"
        ) from None
    connection = connect(path)
    try:
        _configure(connection)
        transaction(connection, lambda connection: _migrate(connection, path))
    except BaseException:
        close(connection)
        raise
    return connection


def transaction(connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """work in one IMMEDIATE transaction: committed if it returns, else rolled back."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        result = work(connection)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return result


def _configure(connection: sqlite3.Connection) -> None:
    # Busy waits are retried by the store, in shorter steps than SQLite's own handler takes.
    connection.execute("PRAGMA busy_timeout = 0")
    connection.execute("PRAGMA journal_mode = WAL")
    # WAL with NORMAL survives any process crash; only an OS crash may lose the tail (see
    # storage.py's docstring).
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Apply the migrations the database lacks, inside the writer's first transaction.

    Concurrent first writes to a new store are safe: one process applies the migrations,
    the others wait on the write lock and then find nothing left to do.
    """
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
    for name, statements in unapplied(MIGRATIONS, applied, str(path)):
        for statement in statements:
            connection.execute(statement)
        connection.execute(
            "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
            (name, datetime.now(UTC).isoformat()),
        )
