"""The SQLite backend, the default: one WAL-mode database file shared by every process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from lazy_memory.adapters.migrations import unapplied
from lazy_memory.adapters.sqlite_schema import MIGRATIONS
from lazy_memory.adapters.sqlite_search import search_hit, search_statement
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, NotFound, StorageUnavailable
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Provenance,
    Record,
    RecordContent,
    RecordType,
    history_entry,
)
from lazy_memory.engine.search import SearchHit, SearchQuery

_BUSY_TIMEOUT_MS = 30_000
_RECORD_COLUMNS = (
    "name, type, description, body, revision, updated_at, actor_kind, actor_detail, provenance"
)
_HISTORY_COLUMNS = (
    "name, type, description, body, revision, operation, at, actor_kind, actor_detail, provenance"
)


class SqliteStorage:
    """Records, history and the compact slot in one SQLite database.

    Writes are IMMEDIATE transactions, so writers in other processes queue on SQLite's own
    lock (waiting up to the busy timeout); within this process one asyncio lock keeps the
    single connection's transactions from interleaving.
    """

    def __init__(self, connection: aiosqlite.Connection, path: Path) -> None:
        self._connection = connection
        self._path = path
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> SqliteStorage:
        """Open (creating if needed) the database at path and bring its schema up to date."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageUnavailable(
                f"cannot create the data directory {path.parent}: {error.strerror}"
            ) from None
        storage = cls(await _connect(path), path)
        try:
            async with storage._translated():
                await storage._configure()
                await storage._migrate()
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

    async def get_record(self, name: str) -> Record:
        """The live record called name."""
        rows = await self._fetch(
            f"SELECT {_RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0", (name,)
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
        async with self._write_transaction() as connection:
            current = await _latest_revision(connection, content.name)
            if if_revision is not None and if_revision != current:
                raise Conflict(
                    f"{content.name!r} is at revision {current}, not {if_revision}: "
                    "reload it and try again"
                )
            entry = HistoryEntry(
                **content.model_dump(),
                revision=current + 1,
                operation=operation,
                actor=actor,
                at=at,
            )
            await _write_entry(connection, entry, deleted=False)
        return Record(
            **content.model_dump(), revision=entry.revision, updated_at=at, updated_by=actor
        )

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision."""
        async with self._write_transaction() as connection:
            async with connection.execute(
                f"SELECT {_RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0", (name,)
            ) as cursor:
                row = await cursor.fetchone()
            if row is None:
                raise NotFound(f"no record named {name!r}")
            live = _record(row)
            entry = history_entry(
                live, revision=live.revision + 1, operation=Operation.REMOVE, actor=actor, at=at
            )
            await _write_entry(connection, entry, deleted=True)
        return entry

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
        rows = await self._fetch("SELECT name, revision FROM records WHERE deleted = 0")
        return {name: revision for name, revision in rows}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        rows = await self._fetch("SELECT name FROM records WHERE deleted = 1 ORDER BY name")
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
        async with self._write_transaction() as connection:
            await connection.execute(
                "INSERT INTO compact (slot, content) VALUES (1, ?) "
                "ON CONFLICT (slot) DO UPDATE SET content = excluded.content",
                (compact.model_dump_json(),),
            )

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        async with self._write_transaction() as connection:
            await connection.execute("DELETE FROM compact")

    async def aclose(self) -> None:
        """Close the connection (and its worker thread)."""
        # A connection that never opened has nothing to close.
        with contextlib.suppress(sqlite3.Error):
            await self._connection.close()

    async def _configure(self) -> None:
        for pragma in (
            f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}",
            "PRAGMA journal_mode = WAL",
            # WAL with NORMAL survives any process crash; only an OS crash may lose the tail.
            "PRAGMA synchronous = NORMAL",
        ):
            await self._connection.execute(pragma)

    async def _migrate(self) -> None:
        """Apply the migrations the database lacks, in one immediate transaction.

        Concurrent first opens of a new store are safe: one process applies the migrations,
        the others wait on the write lock and then find nothing left to do.
        """
        async with self._write_transaction() as connection:
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            async with connection.execute("SELECT name FROM schema_migrations") as cursor:
                applied = {row[0] for row in await cursor.fetchall()}
            for name, statements in unapplied(MIGRATIONS, applied, str(self._path)):
                for statement in statements:
                    await connection.execute(statement)
                await connection.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (name, datetime.now(UTC).isoformat()),
                )

    async def _fetch(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[sqlite3.Row]:
        async with (
            self._lock,
            self._translated(),
            self._connection.execute(sql, parameters) as cursor,
        ):
            return list(await cursor.fetchall())

    @asynccontextmanager
    async def _write_transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One IMMEDIATE transaction: committed if the block succeeds, else rolled back."""
        async with self._lock, self._translated():
            await self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                if self._connection.in_transaction:
                    await self._connection.execute("ROLLBACK")
                raise
            await self._connection.execute("COMMIT")

    @asynccontextmanager
    async def _translated(self) -> AsyncIterator[None]:
        """The one place sqlite3 and OS errors become the engine's StorageUnavailable."""
        try:
            yield
        except (sqlite3.Error, OSError) as error:
            raise StorageUnavailable(
                f"cannot use the SQLite store at {self._path}: {error}"
            ) from None


async def _connect(path: Path) -> aiosqlite.Connection:
    try:
        # isolation_level=None: transactions are begun explicitly, as IMMEDIATE.
        return await aiosqlite.connect(path, isolation_level=None)
    except (sqlite3.Error, OSError) as error:
        raise StorageUnavailable(
            f"cannot open the SQLite store at {path}: {error}{_why_unwritable(path)}"
        ) from None


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


async def _latest_revision(connection: aiosqlite.Connection, name: str) -> int:
    async with connection.execute("SELECT revision FROM records WHERE name = ?", (name,)) as cursor:
        row = await cursor.fetchone()
    return 0 if row is None else int(row[0])


async def _write_entry(
    connection: aiosqlite.Connection, entry: HistoryEntry, *, deleted: bool
) -> None:
    """Make entry the name's current state and append it to the history."""
    at = entry.at.isoformat()
    provenance = None if entry.provenance is None else entry.provenance.model_dump_json()
    await connection.execute(
        "INSERT INTO records (name, type, description, body, revision, deleted, updated_at, "
        "actor_kind, actor_detail, provenance) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET type = excluded.type, "
        "description = excluded.description, body = excluded.body, "
        "revision = excluded.revision, deleted = excluded.deleted, "
        "updated_at = excluded.updated_at, actor_kind = excluded.actor_kind, "
        "actor_detail = excluded.actor_detail, provenance = excluded.provenance",
        (
            entry.name,
            entry.type.value,
            entry.description,
            entry.body,
            entry.revision,
            int(deleted),
            at,
            entry.actor.kind.value,
            entry.actor.detail,
            provenance,
        ),
    )
    await connection.execute(
        f"INSERT INTO history ({_HISTORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.name,
            entry.type.value,
            entry.description,
            entry.body,
            entry.revision,
            entry.operation.value,
            at,
            entry.actor.kind.value,
            entry.actor.detail,
            provenance,
        ),
    )


def _record(row: sqlite3.Row) -> Record:
    name, type_, description, body, revision, updated_at, actor_kind, actor_detail, origin = row
    return Record(
        name=name,
        type=RecordType(type_),
        description=description,
        body=body,
        provenance=_provenance(origin),
        revision=revision,
        updated_at=datetime.fromisoformat(updated_at),
        updated_by=Actor(kind=ActorKind(actor_kind), detail=actor_detail),
    )


def _history_entry(row: sqlite3.Row) -> HistoryEntry:
    name, type_, description, body, revision, operation, at, actor_kind, actor_detail, origin = row
    return HistoryEntry(
        name=name,
        type=RecordType(type_),
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
