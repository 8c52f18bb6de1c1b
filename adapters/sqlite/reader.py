"""How a SQLite store handle reads before it writes: nothing created, no write lock taken.

A handle opens no writer until its first write (storage.py). Until then each read goes to one
of these, chosen from what is on disk at the time:

- No database file (or an empty one and no WAL): an empty in-memory database with the
  schema, so every read answers as an empty store does, and the store is not created.
- A WAL database without its -wal file, so that no connection has it open: a snapshot, an
  `immutable=1` connection. It opens neither the -wal nor the -shm, so it creates neither,
  and it reads a read-only directory, where SQLite cannot create them (its "Write-Ahead
  Logging" page, on read-only databases: a reader needs them to exist, or to be able to
  create them, unless the database is immutable). SQLite trusts an immutable file not to
  change, so the snapshot holds a reader's shared lock (sqlite/connections.py): no
  connection can then checkpoint and delete a -wal file, and a writer that arrives must
  create one before it can change the database file. So the -wal is looked for before each
  read and after it: absent both times, nothing changed since the snapshot was taken;
  present, the read goes (again) through the WAL.
- Otherwise (a writer has the database open or left its -wal behind, or the database is not
  in WAL mode): a `mode=ro` connection. It reads beside the writers like any WAL reader,
  never waiting for their write lock, and with a read-only -shm as well (SQLite 3.22+).

The schema is checked as each connection opens: a database without one reads as empty; one
that lacks a migration reads depend on raises SchemaTooOld, for the handle to apply it as a
write; one from a newer version is refused. Migrations reads do not depend on (an index, the
search index's merge settings) do not hold reading up (sqlite/schema.py READ_NEUTRAL).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from lazy_memory.adapters.migrations import unapplied
from lazy_memory.adapters.sqlite.connections import (
    close,
    connect,
    release_read_lock,
    take_read_lock,
)
from lazy_memory.adapters.sqlite.schema import MIGRATIONS, READ_NEUTRAL

_T = TypeVar("_T")


class SchemaTooOld(Exception):
    """The database lacks migrations that reads depend on: they must be applied first."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(", ".join(missing))
        self.missing = missing


class Reader:
    """A handle's reads of its store, until it opens a writer; one thread at a time."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._wal = path.with_name(f"{path.name}-wal")
        self._connection: sqlite3.Connection | None = None
        self._lock: int | None = None
        """The descriptor holding the shared lock, while _connection is a snapshot."""
        self._schema_ready = False
        self._empty: sqlite3.Connection | None = None
        self.epoch = 0
        """Grows each time reads move to another connection (their data_version restarts)."""

    @property
    def ready(self) -> bool:
        """True if the next read most likely opens nothing first (it may run on the loop)."""
        return self._connection is not None and self._schema_ready

    def read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """work's answer from the connection the files on disk call for."""
        connection = self._current()
        try:
            result = work(connection)
        except sqlite3.DatabaseError:
            if self._lock is None or not _exists(self._wal):
                raise
        else:
            if self._lock is None or not _exists(self._wal):
                return result
        # A writer arrived during the snapshot's read: what it commits may have reached the
        # database file under it (a wrong answer, or a failure). Read again, through the WAL.
        self._open_live()
        return work(self._current())

    def close(self) -> None:
        """Close every connection and let go of the lock; the next read opens afresh."""
        self._drop()
        if self._empty is not None:
            self._empty.close()
            self._empty = None

    def _current(self) -> sqlite3.Connection:
        connection = self._connection
        if connection is None:
            connection = self._open()
            if connection is None:
                return self._empty_store()
        elif self._lock is not None and _exists(self._wal):
            connection = self._open_live()
        if not self._schema_ready:
            if not _schema_ready(connection, self._path):
                return self._empty_store()
            # Reads leave the empty store for this connection: a new epoch.
            self._schema_ready = True
            self.epoch += 1
        return connection

    def _open(self) -> sqlite3.Connection | None:
        """Open the connection the files call for; None if there is no database yet."""
        try:
            size = os.stat(self._path).st_size
        except FileNotFoundError:
            return None
        if size == 0 and not _exists(self._wal):
            return None  # created, never written: nothing to read, nor to lock
        lock = take_read_lock(self._path)
        if lock is not None and not _exists(self._wal):
            try:
                snapshot = connect(self._path, "immutable=1")
            except BaseException:
                release_read_lock(lock)
                raise
            self._connection, self._lock = snapshot, lock
            self.epoch += 1
            return snapshot
        try:
            # Under the lock no connection can delete the -wal before this one has it open,
            # so this one never creates it anew.
            return self._open_live()
        finally:
            if lock is not None:
                release_read_lock(lock)

    def _open_live(self) -> sqlite3.Connection:
        """Read the database as it is now, through its WAL if it has one (`mode=ro`).

        A snapshot's lock is let go of only once this connection has the WAL open.
        """
        connection = connect(self._path, "mode=ro")
        try:
            # The first read opens the WAL and takes SQLite's own shared lock.
            ready = _schema_ready(connection, self._path)
        except BaseException:
            close(connection)
            raise
        self._drop()
        self._connection, self._schema_ready = connection, ready
        return connection

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        lock, self._lock = self._lock, None
        self._schema_ready = False
        self.epoch += 1
        try:
            if connection is not None:
                close(connection)
        finally:
            if lock is not None:
                release_read_lock(lock)

    def _empty_store(self) -> sqlite3.Connection:
        if self._empty is None:
            self._empty = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            for _, statements in MIGRATIONS:
                for statement in statements:
                    self._empty.execute(statement)
        return self._empty


def _schema_ready(connection: sqlite3.Connection, path: Path) -> bool:
    """True if reads can run; False if there is no schema yet (the store reads as empty)."""
    tables = connection.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()[0]
    if not tables:
        return False
    applied = {name for (name,) in connection.execute("SELECT name FROM schema_migrations")}
    if not applied:
        return False
    missing = [
        name for name, _ in unapplied(MIGRATIONS, applied, str(path)) if name not in READ_NEUTRAL
    ]
    if missing:
        raise SchemaTooOld(missing)
    return True


def _exists(path: Path) -> bool:
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    return True
