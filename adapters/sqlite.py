"""The SQLite backend, the default: one WAL-mode database file shared by every process.

Each store handle owns one connection. Every operation is one call on it, a write being a
whole IMMEDIATE transaction (begin, read the revision, write, commit), so the write lock is
held for a fraction of a millisecond. Small operations (a save, a removal, one record, the
change marker) run right on the event loop when the database is free: a thread hand-off
costs more than they do. The rest, and any operation that finds the database locked, run
on the connection's own thread, so the event loop never waits on a lock or a long read.

Writers in other processes queue on SQLite's own lock. SQLite's built-in busy handler sleeps
1, 2, 5, 10 ms... between tries, far longer than a transaction here holds the lock, so a
busy database is retried here instead, after a short randomized pause that grows to two
milliseconds, for up to the same 30 seconds.

Durability: WAL with synchronous=NORMAL. A commit is in the WAL file before the write is
acknowledged, so no process crash (a killed engine included) loses or tears an acknowledged
write; the WAL is synced at each checkpoint, so an OS crash or power loss may roll back the
last commits before it, but never corrupts the database. synchronous=FULL would sync the WAL
at every commit, one fdatasync per save.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import sqlite3
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from lazy_memory.adapters.migrations import unapplied
from lazy_memory.adapters.sqlite_schema import MIGRATIONS
from lazy_memory.adapters.sqlite_search import search_hit, search_statement
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, NotFound, StorageUnavailable
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Provenance,
    Record,
    RecordContent,
    RecordType,
    saved_record,
)
from lazy_memory.engine.search import SearchHit, SearchQuery

BUSY_TIMEOUT_SECONDS = 30.0
"""How long an operation waits for another process's write lock before it fails."""
_FIRST_PAUSE_SECONDS = 0.0001
_MAX_PAUSE_SECONDS = 0.002
CHECKPOINT_WRITES = 100
"""Writes by this handle between two of its background checkpoints."""
AUTOCHECKPOINT_PAGES = 10_000
"""WAL pages at which a commit checkpoints by itself: a bound, for when no engine is writing."""
_RECORD_COLUMNS = (
    "name, type, description, body, revision, updated_at, actor_kind, actor_detail, provenance"
)
_HISTORY_COLUMNS = (
    "name, type, description, body, revision, operation, at, actor_kind, actor_detail, provenance"
)
_UPSERT_RECORD = (
    "INSERT INTO records (name, type, description, body, revision, deleted, updated_at, "
    "actor_kind, actor_detail, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name) DO UPDATE SET type = excluded.type, "
    "description = excluded.description, body = excluded.body, "
    "revision = excluded.revision, deleted = excluded.deleted, "
    "updated_at = excluded.updated_at, actor_kind = excluded.actor_kind, "
    "actor_detail = excluded.actor_detail, provenance = excluded.provenance"
)
_APPEND_HISTORY = f"INSERT INTO history ({_HISTORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_TYPES = {member.value: member for member in RecordType}
INDEX_QUERY = (
    "SELECT name, type, description, revision FROM records WHERE deleted = 0 ORDER BY name"
)
"""The index of live records; the records_live_index covers it, so no body is ever read."""
LIVE_REVISIONS_QUERY = "SELECT name, revision FROM records WHERE deleted = 0"
REMOVED_QUERY = "SELECT name FROM records WHERE deleted = 1 ORDER BY name"

_T = TypeVar("_T")
logger = logging.getLogger(__name__)
Work = Callable[[sqlite3.Connection], _T]
"""What one operation does with the connection, on the connection's thread."""


class SqliteStorage:
    """Records, history and the compact slot in one SQLite database.

    Writes are IMMEDIATE transactions, so writers in other processes queue on SQLite's own
    lock; within this process the connection's single thread runs one operation at a time,
    so transactions never interleave.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazy-sqlite")
        self._lock = asyncio.Lock()
        self._connection: sqlite3.Connection | None = None
        self._closed = False
        # The marker: this handle's own id, SQLite's count of other connections' commits
        # (PRAGMA data_version ignores this connection's), and this connection's writes.
        self._handle = os.urandom(6).hex()
        self._writes = 0
        self._checkpointer = _Checkpointer(path)

    @classmethod
    async def open(cls, path: Path) -> SqliteStorage:
        """Open (creating if needed) the database at path and bring its schema up to date."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageUnavailable(
                f"cannot create the data directory {path.parent}: {error.strerror}"
            ) from None
        storage = cls(path)
        try:
            loop = asyncio.get_running_loop()
            storage._connection = await loop.run_in_executor(storage._thread, _connect, path)
            await storage._run(_configure)
            await storage._run(storage._migrate, write=True)
        except BaseException:
            await storage.aclose()
            raise
        return storage

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        rows = await self._fetch(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE deleted = 0 ORDER BY name"
        )
        return [_record(row) for row in rows]

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name; bodies are never read."""
        return await self._run(_index)

    async def change_marker(self) -> str:
        """This handle, the other connections' commits it has seen, and its own writes."""

        def marker(connection: sqlite3.Connection) -> str:
            (version,) = connection.execute("PRAGMA data_version").fetchone()
            return f"{self._handle}:{version}:{self._writes}"

        return await self._run(marker, inline=True)

    async def get_record(self, name: str) -> Record:
        """The live record called name."""
        rows = await self._fetch(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0",
            (name,),
            inline=True,
        )
        if not rows:
            raise NotFound(f"no record named {name!r}")
        return _record(rows[0])

    async def save_record(
        self,
        content: RecordContent,
        *,
        actor: Actor,
        at: datetime,
        operation: Operation = Operation.SAVE,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record as its next revision, with its history entry."""
        provenance = None if content.provenance is None else content.provenance.model_dump_json()
        row = _Row(content, provenance, operation, actor, at.isoformat())

        def write(connection: sqlite3.Connection) -> int:
            current = _latest_revision(connection, content.name)
            if if_revision is not None and if_revision != current:
                raise Conflict(
                    f"{content.name!r} is at revision {current}, not {if_revision}: "
                    "reload it and try again"
                )
            row.write(connection, current + 1, deleted=False)
            return current + 1

        revision = await self._run(write, write=True, inline=True)
        return saved_record(content, revision=revision, actor=actor, at=at)

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision."""
        stamp = at.isoformat()

        def write(connection: sqlite3.Connection) -> HistoryEntry:
            row = connection.execute(
                f"SELECT {_RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0", (name,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no record named {name!r}")
            live = _record(row)
            entry = HistoryEntry(
                name=live.name,
                type=live.type,
                description=live.description,
                body=live.body,
                provenance=live.provenance,
                revision=live.revision + 1,
                operation=Operation.REMOVE,
                actor=actor,
                at=at,
            )
            _Row(live, row[-1], Operation.REMOVE, actor, stamp).write(
                connection, entry.revision, deleted=True
            )
            return entry

        return await self._run(write, write=True, inline=True)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in write order, or those of one name."""
        if name is None:
            rows = await self._fetch(f"SELECT {_HISTORY_COLUMNS} FROM history ORDER BY seq")
        else:
            rows = await self._fetch(
                f"SELECT {_HISTORY_COLUMNS} FROM history WHERE name = ? ORDER BY seq", (name,)
            )
        return [_history_entry(row) for row in rows]

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        rows = await self._fetch(LIVE_REVISIONS_QUERY)
        return {name: revision for name, revision in rows}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        rows = await self._fetch(REMOVED_QUERY)
        return [name for (name,) in rows if name in watermark]

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, ranked by FTS5's bm25, then by name."""
        sql, parameters = search_statement(query, limit)
        return [search_hit(row, query) for row in await self._fetch(sql, parameters)]

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        rows = await self._fetch("SELECT content FROM compact WHERE slot = 1")
        if not rows:
            return None
        try:
            return Compact.model_validate_json(rows[0][0])
        except ValueError as error:
            raise StorageUnavailable(f"the compact in {self._path} is corrupt: {error}") from None

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot."""
        content = compact.model_dump_json()

        def write(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO compact (slot, content) VALUES (1, ?) "
                "ON CONFLICT (slot) DO UPDATE SET content = excluded.content",
                (content,),
            )

        await self._run(write, write=True)

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        await self._run(
            lambda connection: connection.execute("DELETE FROM compact"), write=True, inline=True
        )

    async def aclose(self) -> None:
        """Close the connection and end its thread."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            await self._checkpointer.aclose()
            connection, self._connection = self._connection, None
            if connection is not None:
                # Closing anyway: the file handles go with the connection.
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
            self._thread.shutdown(wait=False)

    def _migrate(self, connection: sqlite3.Connection) -> None:
        """Apply the migrations the database lacks, in one immediate transaction.

        Concurrent first opens of a new store are safe: one process applies the migrations,
        the others wait on the write lock and then find nothing left to do.
        """
        connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        applied = {row[0] for row in connection.execute("SELECT name FROM schema_migrations")}
        for name, statements in unapplied(MIGRATIONS, applied, str(self._path)):
            for statement in statements:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat()),
            )

    async def _fetch(self, sql: str, parameters: Any = (), *, inline: bool = False) -> list[Any]:
        def fetch(connection: sqlite3.Connection) -> list[Any]:
            return connection.execute(sql, parameters).fetchall()

        return await self._run(fetch, inline=inline)

    async def _run(self, work: Work[_T], *, write: bool = False, inline: bool = False) -> _T:
        """Run work on the connection, a write as one IMMEDIATE transaction.

        inline work (small, quick reads and writes) runs right here on the event loop when
        the database is not busy, sparing two thread hand-offs; anything else, and inline
        work that found another process holding the lock, runs on the connection's thread,
        which waits out the lock. The one place sqlite3 and OS errors become the engine's
        StorageUnavailable.
        """
        async with self._lock:
            connection = self._connection
            if self._closed or connection is None:
                raise StorageUnavailable(f"the SQLite store at {self._path} has been closed")
            try:
                if inline:
                    try:
                        return self._once(connection, work, write)
                    except sqlite3.OperationalError as error:
                        if not _busy(error):
                            raise
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(
                    self._thread, self._attempt, connection, work, write
                )
            except (sqlite3.Error, OSError) as error:
                raise StorageUnavailable(
                    f"cannot use the SQLite store at {self._path}: {error}"
                    f"{_why_unwritable(self._path)}"
                ) from None
            finally:
                if write:
                    self._checkpointer.wrote()

    def _once(self, connection: sqlite3.Connection, work: Work[_T], write: bool) -> _T:
        """work, once; a write in its own transaction."""
        if not write:
            return work(connection)
        try:
            return _transaction(connection, work)
        finally:
            # Even a write that failed may have committed, so the marker moves anyway.
            self._writes += 1

    def _attempt(self, connection: sqlite3.Connection, work: Work[_T], write: bool) -> _T:
        """work, run again after a short pause for as long as the database is busy."""
        deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
        pause = _FIRST_PAUSE_SECONDS
        while True:
            try:
                return self._once(connection, work, write)
            except sqlite3.OperationalError as error:
                if not _busy(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, _MAX_PAUSE_SECONDS)


class _Checkpointer:
    """Copies the WAL back into the database in the background, off every commit's path.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold, two
    fsyncs included: the one save that pays waits milliseconds (tens on a busy disk), and an
    inline save holds up the event loop meanwhile. Here, every CHECKPOINT_WRITES writes, a
    PASSIVE checkpoint (it never waits for, or blocks, readers and writers) runs on a thread
    and connection of its own. The automatic checkpoint stays, at AUTOCHECKPOINT_PAGES, as a
    bound on the WAL for stores that only short-lived processes write to.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._running: asyncio.Future[None] | None = None
        self._writes = 0

    def wrote(self) -> None:
        """Count one write; start a checkpoint if enough were made and none is running."""
        self._writes += 1
        if self._writes < CHECKPOINT_WRITES or not (self._running is None or self._running.done()):
            return
        self._writes = 0
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazy-wal")
        self._running = asyncio.get_running_loop().run_in_executor(self._thread, self._checkpoint)

    async def aclose(self) -> None:
        """Wait for a running checkpoint, then close the connection and end the thread."""
        if self._running is not None:
            await asyncio.wait([self._running])
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None
        if self._thread is not None:
            self._thread.shutdown(wait=False)

    def _checkpoint(self) -> None:
        # A checkpoint that cannot run now is only put off: the next one, or SQLite's own,
        # copies the same pages.
        try:
            if self._connection is None:
                self._connection = sqlite3.connect(
                    self._path, isolation_level=None, timeout=0, check_same_thread=False
                )
            self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:
            logger.debug("background checkpoint of %s skipped: %s", self._path, error)


class _Row:
    """A write's values as the records and history tables hold them."""

    def __init__(
        self,
        content: RecordContent,
        provenance: str | None,
        operation: Operation,
        actor: Actor,
        at: str,
    ) -> None:
        self.content = content
        self.provenance = provenance
        self.operation = operation
        self.actor = actor
        self.at = at

    def write(self, connection: sqlite3.Connection, revision: int, *, deleted: bool) -> None:
        """Make this the name's current state as revision, and append it to the history."""
        content, actor = self.content, self.actor
        connection.execute(
            _UPSERT_RECORD,
            (
                content.name,
                content.type.value,
                content.description,
                content.body,
                revision,
                int(deleted),
                self.at,
                actor.kind.value,
                actor.detail,
                self.provenance,
            ),
        )
        connection.execute(
            _APPEND_HISTORY,
            (
                content.name,
                content.type.value,
                content.description,
                content.body,
                revision,
                self.operation.value,
                self.at,
                actor.kind.value,
                actor.detail,
                self.provenance,
            ),
        )


def _connect(path: Path) -> sqlite3.Connection:
    try:
        # isolation_level=None: transactions are begun explicitly, as IMMEDIATE. The event
        # loop and the connection's thread take turns with it, never both at once (the
        # store's lock), hence check_same_thread=False. timeout=0: _attempt does the waiting.
        return sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    except (sqlite3.Error, OSError) as error:
        raise StorageUnavailable(
            f"cannot open the SQLite store at {path}: {error}{_why_unwritable(path)}"
        ) from None


def _configure(connection: sqlite3.Connection) -> None:
    # Busy waits are retried by _attempt, in shorter steps than SQLite's own handler takes.
    connection.execute("PRAGMA busy_timeout = 0")
    connection.execute("PRAGMA journal_mode = WAL")
    # WAL with NORMAL survives any process crash; only an OS crash may lose the tail (see
    # the module's docstring).
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")


def _transaction(connection: sqlite3.Connection, work: Work[_T]) -> _T:
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


def _busy(error: sqlite3.OperationalError) -> bool:
    """True if the database was locked by another connection: worth another try."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "database is locked" in str(error)
    return bool(code & 0xFF == sqlite3.SQLITE_BUSY)


def _index(connection: sqlite3.Connection) -> list[IndexEntry]:
    cursor = connection.execute(INDEX_QUERY)
    # Straight from the cursor, so no second list of rows is ever held.
    return [
        IndexEntry(name, _TYPES[type_], description, revision)
        for name, type_, description, revision in cursor
    ]


def _why_unwritable(path: Path) -> str:
    """A hint for SQLite's vague "unable to open database file" when the folder is the cause."""
    try:
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return " (its file system is mounted read-only)"
    except OSError:
        return ""
    if not os.access(path.parent, os.W_OK):
        return " (its folder is not writable, and SQLite needs to create files beside it)"
    return ""


def _latest_revision(connection: sqlite3.Connection, name: str) -> int:
    row = connection.execute("SELECT revision FROM records WHERE name = ?", (name,)).fetchone()
    return 0 if row is None else int(row[0])


def _record(row: Any) -> Record:
    name, type_, description, body, revision, updated_at, actor_kind, actor_detail, origin = row
    return Record(
        name=name,
        type=_TYPES[type_],
        description=description,
        body=body,
        provenance=_provenance(origin),
        revision=revision,
        updated_at=datetime.fromisoformat(updated_at),
        updated_by=Actor(kind=ActorKind(actor_kind), detail=actor_detail),
    )


def _history_entry(row: Any) -> HistoryEntry:
    name, type_, description, body, revision, operation, at, actor_kind, actor_detail, origin = row
    return HistoryEntry(
        name=name,
        type=_TYPES[type_],
        description=description,
        body=body,
        provenance=_provenance(origin),
        revision=revision,
        operation=Operation(operation),
        at=datetime.fromisoformat(at),
        actor=Actor(kind=ActorKind(actor_kind), detail=actor_detail),
    )


def _provenance(stored: str | None) -> Provenance | None:
    return None if stored is None else Provenance.model_validate_json(stored)
