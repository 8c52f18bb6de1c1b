"""The SQLite backend, the default: one WAL-mode database file shared by every process.

Each store handle reads through a reader connection until its first write and through a
writer from then on (sqlite/access.py), both used from one thread of its own. Every
operation is one call on a connection, a write being a whole IMMEDIATE transaction (begin,
read the revision, write, commit), so the write lock is held for a fraction of a
millisecond. Small operations (a save, a removal, one record, the change marker) run right
on the event loop when the database is free: a thread hand-off costs more than they do. The
rest, and any operation that finds the database locked, run on the handle's thread, so the
event loop never waits on a lock or a long read.

Writers in other processes queue on SQLite's own lock. SQLite's built-in busy handler sleeps
1, 2, 5, 10 ms... between tries, far longer than a transaction here holds the lock, so a
busy database is retried instead (sqlite/access.py), after a short randomized pause that
grows to two milliseconds, for up to the same 30 seconds.

A handle reads without writing anything until its first write: no folder, database, -wal or
-shm file is created and no write lock taken (sqlite/reader.py), so a store that does not
exist reads as empty and a read-only one reads. The first write creates the database if need
be, migrates it, and from then on the handle reads through its writer connection too.

Durability: WAL with synchronous=NORMAL. A commit is in the WAL file before the write is
acknowledged, so no process crash (a killed engine included) loses or tears an acknowledged
write; the WAL is synced at each checkpoint, so an OS crash or power loss may roll back the
last commits before it, but never corrupts the database. synchronous=FULL would sync the WAL
at every commit, one fdatasync per save.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from lazy_memory.adapters.sql_rows import (
    HISTORY_COLUMNS,
    RECORD_COLUMNS,
    history_from_row,
    read_row,
    read_rows,
    record_from_row,
    record_problem,
)
from lazy_memory.adapters.sqlite.access import Access, Work
from lazy_memory.adapters.sqlite.checkpoint import Checkpointer
from lazy_memory.adapters.sqlite.failures import busy, leniently, unparsed, why_unwritable
from lazy_memory.adapters.sqlite.index import compact_json, index, index_batches, removed_since
from lazy_memory.adapters.sqlite.search import search_hit, search_statement
from lazy_memory.adapters.sqlite.space import disk_full, full_disk_reason, save_needs
from lazy_memory.adapters.sqlite.tables import (
    DIALECT,
    LIVE_REVISIONS_QUERY,
    Row,
    latest_revision_and_size,
    spellings,
)
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import (
    Conflict,
    NotFound,
    StorageUnavailable,
    UnreadableRecords,
)
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.ports import IndexBatches
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    saved_record,
)
from lazy_memory.engine.search_model import SearchHit, SearchQuery

_CHECKED_ROWS = 500
"""Rows unreadable_records checks at a time: bodies and all, so never the whole store."""

_T = TypeVar("_T")


class SqliteStorage:
    """Records, history and the compact slot in one SQLite database.

    Writes are IMMEDIATE transactions, so writers in other processes queue on SQLite's own
    lock; within this process the handle's single thread runs one operation at a time,
    so transactions never interleave.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._where = f"the SQLite store at {path}"
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazy-sqlite")
        self._lock = asyncio.Lock()
        self._access = Access(path)
        self._closed = False
        # The marker: this handle's own id, the reader's epoch (it moves whenever reads move
        # to another connection), SQLite's count of other connections' commits (PRAGMA
        # data_version ignores this connection's), and this connection's writes.
        self._handle = os.urandom(6).hex()
        self._checkpointer = Checkpointer(path)

    @classmethod
    async def open(cls, path: Path) -> SqliteStorage:
        """Open the database at path to read it; the first write creates and migrates it.

        Its schema is read here, so a corrupt database, or a newer version's, fails now.
        """
        storage = cls(path)
        try:
            await storage._run(lambda _: None)  # a read of nothing: opening is the point
        except BaseException:
            await storage.aclose()
            raise
        return storage

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        rows = await self._fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE deleted = 0 ORDER BY name"
        )
        return read_rows(rows, self._record, self._where)

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name; bodies are never read."""
        failed: list[UnreadableRecord] = []
        return self._read_all(await self._run(lambda connection: index(connection, failed)), failed)

    async def fold_index(self, fold: Callable[[IndexBatches], _T]) -> _T:
        """fold's answer on the index, read in batches from the cursor on the connection's
        thread: a read made again (sqlite/reader.py) folds again from the start."""
        failed: list[UnreadableRecord] = []
        answer = await self._run(lambda connection: fold(index_batches(connection, failed)))
        return self._read_all(answer, failed)

    async def unreadable_records(self) -> list[UnreadableRecord]:
        """Every live record whose row does not read, and why, in name order."""

        def check(connection: sqlite3.Connection) -> list[UnreadableRecord]:
            cursor = connection.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE deleted = 0 ORDER BY name"
            )
            failed = []
            while rows := cursor.fetchmany(_CHECKED_ROWS):
                failed += [problem for row in rows if (problem := record_problem(row, DIALECT))]
            return failed

        return await self._run(check)

    async def change_marker(self) -> str:
        """This handle, the other connections' commits it has seen, and its own writes."""

        def marker(connection: sqlite3.Connection) -> str:
            (version,) = connection.execute("PRAGMA data_version").fetchone()
            return f"{self._handle}:{self._access.reader.epoch}:{version}:{self._access.writes}"

        return await self._run(marker, inline=True)

    async def recall_record(self, name: str) -> Record:
        """The live record called name."""
        rows = await self._fetch(
            f"SELECT {RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0",
            (name,),
            inline=True,
        )
        if not rows:
            raise NotFound(f"no record named {name!r}")
        return read_row(rows[0], self._record, self._where)

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
        row = Row(content, provenance, operation, actor, at.isoformat())
        text = len(content.name) + len(content.description) + len(content.body.encode())
        replaced = [0]

        def write(connection: sqlite3.Connection) -> int:
            current, replaced[0] = latest_revision_and_size(connection, content.name)
            if if_revision is not None and if_revision != current:
                raise Conflict(
                    f"{content.name!r} is at revision {current}, not {if_revision}: "
                    "reload it and try again"
                )
            row.write(connection, current + 1, deleted=False)
            return current + 1

        revision = await self._run(
            write, write=True, inline=True, needs=lambda: save_needs(text, replaced[0])
        )
        return saved_record(content, revision=revision, actor=actor, at=at)

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision."""
        stamp = at.isoformat()

        def write(connection: sqlite3.Connection) -> HistoryEntry:
            row = connection.execute(
                f"SELECT {RECORD_COLUMNS} FROM records WHERE name = ? AND deleted = 0", (name,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no record named {name!r}")
            live = read_row(row, self._record, self._where)
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
            Row(live, row[-1], Operation.REMOVE, actor, stamp).write(
                connection, entry.revision, deleted=True
            )
            return entry

        return await self._run(write, write=True, inline=True)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in write order, or those of one name."""
        if name is None:
            rows = await self._fetch(f"SELECT {HISTORY_COLUMNS} FROM history ORDER BY seq")
        else:
            rows = await self._fetch(
                f"SELECT {HISTORY_COLUMNS} FROM history WHERE name = ? ORDER BY seq", (name,)
            )
        return read_rows(rows, lambda row: history_from_row(row, DIALECT), self._where)

    async def spellings(self, name: str) -> list[str]:
        """The names held, live or removed, that are the same name as name."""
        return await self._run(lambda connection: spellings(connection, name))

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        rows = await self._fetch(LIVE_REVISIONS_QUERY)
        return {name: revision for name, revision in rows}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        return await self._run(lambda connection: removed_since(connection, watermark))

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, ranked by FTS5's bm25, then by name."""
        sql, parameters = search_statement(query, limit)
        rows = await self._fetch(sql, parameters)
        return read_rows(rows, lambda row: search_hit(row, query), self._where)

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        content = await self._run(compact_json)
        if content is None:
            return None
        try:
            return Compact.model_validate_json(content)
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
            self._access.close()
            self._thread.shutdown(wait=False)

    def _read_all(self, answer: _T, failed: list[UnreadableRecord]) -> _T:
        """answer, a read's of every record; or UnreadableRecords with it, if some failed."""
        if failed:
            raise UnreadableRecords.found(self._where, failed, answer)
        return answer

    @staticmethod
    def _record(row: Any) -> Record | UnreadableRecord:
        return record_from_row(row, DIALECT)

    async def _fetch(self, sql: str, parameters: Any = (), *, inline: bool = False) -> list[Any]:
        def fetch(connection: sqlite3.Connection) -> list[Any]:
            return connection.execute(sql, parameters).fetchall()

        return await self._run(fetch, inline=inline)

    async def _run(
        self,
        work: Work[_T],
        *,
        write: bool = False,
        inline: bool = False,
        needs: Callable[[], int] | None = None,
    ) -> _T:
        """Run work on the connection, a write as one IMMEDIATE transaction.

        inline work (small, quick reads and writes) runs right here on the event loop when
        the database is not busy and no connection has to be opened first, sparing two
        thread hand-offs; anything else, and inline work that found another process holding
        the lock, runs on the handle's thread, which waits out the lock. The one place
        sqlite3 and OS errors become the engine's StorageUnavailable; on a full disk it says
        how much is free and, for a write that gave it, the room it needs. Text that is not
        UTF-8 makes work read again leniently (sqlite/failures.py), so the rows that hold it
        are named, not every read failed.
        """
        work = leniently(work)
        async with self._lock:
            if self._closed:
                raise StorageUnavailable(f"the SQLite store at {self._path} has been closed")
            try:
                if inline and self._access.ready(write):
                    try:
                        return self._access.once(work, write)
                    except sqlite3.OperationalError as error:
                        if not busy(error):
                            raise
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(self._thread, self._access.attempt, work, write)
            except (sqlite3.Error, OSError) as error:
                why = (
                    f" ({full_disk_reason(self._path, needs() if needs else 0)})"
                    if disk_full(error)
                    else why_unwritable(self._path)
                )
                raise StorageUnavailable(
                    f"cannot use the SQLite store at {self._path}: {error}{why}"
                ) from None
            except (ValueError, KeyError) as error:
                raise unparsed(self._path, error) from None
            finally:
                if write and self._access.writer is not None:
                    self._checkpointer.wrote()
