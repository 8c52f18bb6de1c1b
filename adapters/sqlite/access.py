"""How a SQLite store handle reaches its database: which connection runs an operation, opening
the writer (and migrating) at the first write, and retrying while another process holds the
write lock.

The store (storage.py) decides where an operation runs (on the event loop or its thread) and
turns what fails into the engine's errors; this is what runs there. Until the handle's first
write, reads go to the reader (sqlite/reader.py); from then on everything goes through the
writer (sqlite/writer.py), which sees every commit, its own included. The writer's first
transaction brings the schema up to date before its work (migrate), so a current schema
costs no transaction of its own (_transaction).
"""

from __future__ import annotations

import contextlib
import logging
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from lazy_memory.adapters.sqlite.connections import close
from lazy_memory.adapters.sqlite.failures import busy, why_unwritable
from lazy_memory.adapters.sqlite.reader import Reader, SchemaTooOld
from lazy_memory.adapters.sqlite.space import merging
from lazy_memory.adapters.sqlite.writer import migrate, open_writer, transaction
from lazy_memory.engine.errors import StorageUnavailable

BUSY_TIMEOUT_SECONDS = 30.0
"""How long an operation waits for another process's write lock before it fails."""
_FIRST_PAUSE_SECONDS = 0.0001
_MAX_PAUSE_SECONDS = 0.002

_T = TypeVar("_T")
logger = logging.getLogger(__name__)
Work = Callable[[sqlite3.Connection], _T]
"""What one operation does with the connection, on the store handle's thread."""


class Access:
    """A handle's connections: the reader until its first write, the writer from then on."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.reader = Reader(path)
        self.writer: sqlite3.Connection | None = None
        """The writer, from this handle's first write on; until then reads go to the reader."""
        self.writes = 0
        """Writes this handle made, failed ones included (each may have committed)."""
        self._migrated = False
        """Whether the writer has found the schema current, or committed a migration."""

    def ready(self, write: bool) -> bool:
        """True if work can run without a connection being opened first."""
        return self.writer is not None or (not write and self.reader.ready)

    def once(self, work: Work[_T], write: bool) -> _T:
        """work, once: on the writer, or before this handle's first write a read on the
        reader; a write in its own transaction."""
        if self.writer is None and not write:
            try:
                return self.reader.read(work)
            except SchemaTooOld as old:
                self._upgrade(old)
        connection = self.writer or self._open_writer()
        if not write:
            return work(connection)
        try:
            return self._transaction(connection, merging(work, self._path))
        finally:
            # Even a write that failed may have committed, so the marker moves anyway.
            self.writes += 1

    def attempt(self, work: Work[_T], write: bool) -> _T:
        """work, run again after a short pause for as long as the database is busy."""
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        pause = _FIRST_PAUSE_SECONDS
        while True:
            try:
                return self.once(work, write)
            except sqlite3.OperationalError as error:
                if not busy(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, _MAX_PAUSE_SECONDS)

    def close(self) -> None:
        """Close the reader and the writer, whatever either says as it closes."""
        # Closing anyway: the file handles go with the connections.
        with contextlib.suppress(sqlite3.Error, OSError):
            self.reader.close()
        self._close_writer()

    def _close_writer(self) -> None:
        connection, self.writer = self.writer, None
        if connection is not None:
            with contextlib.suppress(sqlite3.Error):
                close(connection)

    def _transaction(self, connection: sqlite3.Connection, work: Work[_T]) -> _T:
        """work in one transaction of the writer, after the migrations the database lacks
        until the writer knows it lacks none."""
        if self._migrated:
            return transaction(connection, work)
        migrating = False

        def migrate_then_work(connection: sqlite3.Connection) -> _T:
            nonlocal migrating
            migrating = not migrate(connection, self._path)
            self._migrated = not migrating
            return work(connection)

        try:
            result = transaction(connection, migrate_then_work)
        except BaseException:
            if not self._migrated:
                self._after_failed_first_write(connection, migrating)
            raise
        self._migrated = True
        return result

    def _after_failed_first_write(self, connection: sqlite3.Connection, migrating: bool) -> None:
        """After a first write that failed before the writer knew the schema current: the
        migrations it applied (rolled back with it) applied by themselves, as a write that
        fails still leaves the store it created migrated; else (the database was busy, or
        could not be migrated) the writer closed again, and reads back on the reader."""
        if migrating:
            try:
                transaction(connection, lambda connection: migrate(connection, self._path))
            except (sqlite3.Error, OSError, StorageUnavailable):
                pass
            else:
                self._migrated = True
                return
        self._close_writer()

    def _open_writer(self) -> sqlite3.Connection:
        """The writer (sqlite/writer.py), through which this handle reads from now on too."""
        connection = self.writer = open_writer(self._path)
        # The writer sees every commit, its own included: the reader has had its day.
        try:
            self.reader.close()
        except (sqlite3.Error, OSError) as error:
            logger.debug("closing the reader of %s: %s", self._path, error)
        return connection

    def _upgrade(self, old: SchemaTooOld) -> None:
        """Apply the migrations reads depend on, a write; or say why the store cannot be read."""
        try:
            self._transaction(self._open_writer(), lambda _: None)
        except (sqlite3.Error, OSError) as error:
            if isinstance(error, sqlite3.OperationalError) and busy(error):
                raise
            raise StorageUnavailable(
                f"the SQLite store at {self._path} must be migrated ({old}) before it can be "
                f"read, and cannot be written: {error}{why_unwritable(self._path)}"
            ) from None
