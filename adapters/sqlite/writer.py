"""The SQLite backend's writer connection: the database created if need be, in WAL, migrated.

A store handle opens it at its first write (storage.py), never before: until then it only
reads (sqlite/reader.py), so reading a store creates nothing. The schema is brought up to date
inside that first write's own transaction (migrate), so a handle's first save is one
transaction, not a migration's and then its own: on a current schema the check is one
`PRAGMA user_version` in a transaction that is open anyway.
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
from lazy_memory.adapters.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from lazy_memory.engine.errors import StorageUnavailable

AUTOCHECKPOINT_PAGES = 10_000
"""WAL pages at which a commit checkpoints by itself: a bound, for when no engine is writing."""

_T = TypeVar("_T")


def open_writer(path: Path) -> sqlite3.Connection:
    """A connection that writes the database at path, its folder and file created if need be,
    in WAL mode, not yet migrated (migrate, in its first transaction); sqlite3 errors (a busy
    database among them) go through."""
    try:
        create_data_dir(path.parent)
    except OSError as error:
        raise StorageUnavailable(
            f"cannot create the data directory {path.parent}: {error.strerror}"
        ) from None
    connection = connect(path)
    try:
        _configure(connection)
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


def migrate(connection: sqlite3.Connection, path: Path) -> bool:
    """Apply the migrations the database lacks, inside a transaction of the writer; True when
    its user_version said it lacked none (so a rollback of that transaction undoes nothing).

    The database's user_version is SCHEMA_VERSION once every migration is applied, so a
    current schema costs that one pragma; any other (0 in a store from before the version
    was kept, or a newer version's) is checked against schema_migrations, which refuses a
    newer version's. Concurrent first writes to a new store are safe: one process applies
    the migrations, the others wait on the write lock and then find nothing left to do.
    """
    if connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return True
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
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return False
