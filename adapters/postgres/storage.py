"""The PostgreSQL backend: one database shared by many projects, machines and processes.

Every row carries its project's key, so projects sharing a database never see each other's
records. PostgresStorage holds the queries; the rest is split along its seams:

- postgres/connections.py: the pool, and running an operation on it, retried where safe:
  the one place driver errors become typed errors (postgres/errors.py, postgres/retry.py);
- postgres/schema.py: the migrations, applied by the first operation;
- postgres/writes.py: a write's transaction (lock the name, write the row, append the
  history entry, announce it);
- postgres/notifications.py: the NOTIFY/LISTEN change feed;
- postgres/search.py: search candidates from a tsvector index, ranked by engine/search_ranking.py;
- postgres/text.py: NUL-escaped text, and the dialect of the shared row mapper (sql_rows.py);
- postgres/dsn.py: the DSN's check, and where it points, for messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import asyncpg

from lazy_memory.adapters.config import DEFAULT_CONNECT_TIMEOUT_SECONDS
from lazy_memory.adapters.postgres.connections import Connections
from lazy_memory.adapters.postgres.dsn import check_dsn, describe
from lazy_memory.adapters.postgres.notifications import ChangeFeed
from lazy_memory.adapters.postgres.search import candidates, hits
from lazy_memory.adapters.postgres.text import (
    DIALECT,
    PooledConnection,
    json_list,
    lenient_connection,
    loaded,
    stored,
    text_list,
)
from lazy_memory.adapters.postgres.writes import append, lock_name, touch_project
from lazy_memory.adapters.row_checks import index_entries
from lazy_memory.adapters.sql_rows import (
    HISTORY_COLUMNS,
    RECORD_COLUMNS,
    history_from_row,
    read_row,
    read_rows,
    record_from_row,
    record_problem,
)
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, NotFound, StorageUnavailable, UnreadableRecords
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.names import name_key, spellings_among
from lazy_memory.engine.ports import ChangeListener
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    history_entry,
    record_after,
)
from lazy_memory.engine.search_model import SearchHit, SearchQuery

if TYPE_CHECKING:
    from lazy_memory.adapters.postgres.connections import Connection

POOL_MAX_SIZE = 4
COMMAND_TIMEOUT_SECONDS = 60.0

_LIVE_RECORD = (
    f"SELECT {RECORD_COLUMNS} FROM lazy_records WHERE project = $1 AND name = $2 AND NOT deleted"
)
_HELD = "SELECT 1 FROM lazy_records WHERE project = $1 AND name = $2"


class PostgresStorage:
    """Records, history and the compact slot of one project in a PostgreSQL database.

    It is also a ChangeFeed: subscribers hear of every write committed to the project, by
    any process on any machine, this one's own included.
    """

    def __init__(
        self,
        pool: asyncpg.Pool[Any],
        dsn: str,
        project: str,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
    ) -> None:
        self.project = project
        self.where = describe(dsn)
        self._store = f"the store of project {project!r} in PostgreSQL at {self.where}"
        self._connections = Connections(pool, self.where, connect_timeout)
        self._feed = ChangeFeed(dsn, project, self.where, connect_timeout)

    @classmethod
    async def open(
        cls, dsn: str, project: str, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    ) -> PostgresStorage:
        """The store of project in the database at dsn.

        Nothing connects yet: the first operation does, and brings the schema up to date, so
        a server that is down fails operations (a launch still gets its UNAVAILABLE marker)
        and an engine started meanwhile recovers when the server comes back. Reaching the
        server, retries included, takes connect_timeout seconds at most.
        """
        check_dsn(dsn)
        pool = asyncpg.create_pool(
            dsn,
            min_size=0,
            max_size=POOL_MAX_SIZE,
            timeout=connect_timeout,
            command_timeout=COMMAND_TIMEOUT_SECONDS,
            connection_class=PooledConnection,
            init=lenient_connection,
        )
        return cls(await pool, dsn, project, connect_timeout)

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        rows = await self._connections.fetch(
            f"SELECT {RECORD_COLUMNS} FROM lazy_records "
            "WHERE project = $1 AND NOT deleted ORDER BY name",
            self.project,
        )
        return read_rows(rows, _record, self._store)

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name; bodies are never read."""
        rows = await self._connections.fetch(
            "SELECT name, type, description, revision, updated_at FROM lazy_records "
            "WHERE project = $1 AND NOT deleted ORDER BY name",
            self.project,
        )
        failed: list[UnreadableRecord] = []
        # asyncpg hands TIMESTAMPTZ over as an aware datetime: nothing to parse per row.
        entries = index_entries(rows, DIALECT.parse, failed, text=loaded)
        if failed:
            raise UnreadableRecords.found(self._store, failed, entries)
        return entries

    async def unreadable_records(self) -> list[UnreadableRecord]:
        """Every live record whose row does not read, and why, in name order."""
        rows = await self._connections.fetch(
            f"SELECT {RECORD_COLUMNS} FROM lazy_records "
            "WHERE project = $1 AND NOT deleted ORDER BY name",
            self.project,
        )
        return [problem for row in rows if (problem := record_problem(row, DIALECT))]

    async def change_marker(self) -> str:
        """The version of the project's counter row: every write of any kind updates it.

        A record write takes the next history number from the row; a compact write updates
        the row without changing its number. Each makes a new row version, stamped with the
        writing transaction's id (xmin), which no earlier write of the project had.
        """
        rows = await self._connections.fetch(
            "SELECT last_seq, xmin::text FROM lazy_projects WHERE project = $1", self.project
        )
        return "0:none" if not rows else f"{rows[0]['last_seq']}:{rows[0]['xmin']}"

    async def recall_record(self, name: str) -> Record:
        """The live record called name."""
        rows = await self._connections.fetch(_LIVE_RECORD, self.project, stored(name))
        if not rows:
            raise NotFound(f"no record named {name!r}")
        return read_row(rows[0], _record, self._store)

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

        async def write(connection: Connection) -> HistoryEntry:
            current = await lock_name(connection, self.project, content.name)
            if if_revision is not None and if_revision != current:
                raise Conflict(
                    f"{content.name!r} is at revision {current}, not {if_revision}: "
                    "reload it and try again"
                )
            entry = history_entry(
                content, revision=current + 1, operation=operation, actor=actor, at=at
            )
            await append(connection, self.project, entry, deleted=False)
            return entry

        return record_after(await self._connections.run(write, write=True))

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision."""

        async def write(connection: Connection) -> HistoryEntry:
            await lock_name(connection, self.project, name)
            row = await connection.fetchrow(_LIVE_RECORD, self.project, stored(name))
            if row is None:
                raise NotFound(f"no record named {name!r}")
            live = read_row(row, _record, self._store)
            entry = history_entry(
                live, revision=live.revision + 1, operation=Operation.REMOVE, actor=actor, at=at
            )
            await append(connection, self.project, entry, deleted=True)
            return entry

        return await self._connections.run(write, write=True)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in write order, or those of one name."""
        if name is None:
            rows = await self._connections.fetch(
                f"SELECT {HISTORY_COLUMNS} FROM lazy_history WHERE project = $1 ORDER BY seq",
                self.project,
            )
        else:
            rows = await self._connections.fetch(
                f"SELECT {HISTORY_COLUMNS} FROM lazy_history "
                "WHERE project = $1 AND name = $2 ORDER BY seq",
                self.project,
                stored(name),
            )
        return read_rows(rows, lambda row: history_from_row(row, DIALECT), self._store)

    async def spellings(self, name: str) -> list[str]:
        """The names held, live or removed, that are the same name as name."""
        exact = await self._connections.fetch(_HELD, self.project, stored(name))
        if exact:
            return [name]
        # Only a name outside printable ASCII can differ from its NFC form (engine/names.py).
        rows = await self._connections.fetch(
            "SELECT name FROM lazy_records WHERE project = $1 AND (name = $2 OR name ~ '[^ -~]')",
            self.project,
            stored(name_key(name)),
        )
        return spellings_among(name, [loaded(row["name"]) for row in rows])

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        rows = await self._connections.fetch(
            "SELECT name, revision FROM lazy_records WHERE project = $1 AND NOT deleted",
            self.project,
        )
        return {loaded(row["name"]): row["revision"] for row in rows}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        rows = await self._connections.fetch(
            "SELECT name FROM lazy_records "
            f"WHERE project = $1 AND deleted AND name = ANY({text_list(2)}) ORDER BY name",
            self.project,
            json_list(stored(name) for name in watermark),
        )
        return [loaded(row["name"]) for row in rows]

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, ranked as every backend ranks them."""
        sql, arguments = candidates(query)
        rows = await self._connections.fetch(sql, self.project, *arguments)
        return hits(query, limit, rows, self._store)

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        rows = await self._connections.fetch(
            "SELECT content FROM lazy_compacts WHERE project = $1", self.project
        )
        if not rows:
            return None
        try:
            return Compact.model_validate_json(rows[0]["content"])
        except ValueError as error:
            raise StorageUnavailable(
                f"the compact of project {self.project!r} at {self.where} is corrupt: {error}"
            ) from None

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot."""

        async def write(connection: Connection) -> None:
            await connection.execute(
                "INSERT INTO lazy_compacts (project, content) VALUES ($1, $2) "
                "ON CONFLICT (project) DO UPDATE SET content = excluded.content",
                self.project,
                compact.model_dump_json(),
            )
            await touch_project(connection, self.project)

        await self._connections.run(write, write=True)

    async def clear_compact(self) -> None:
        """Empty the compact slot."""

        async def write(connection: Connection) -> None:
            await connection.execute("DELETE FROM lazy_compacts WHERE project = $1", self.project)
            await touch_project(connection, self.project)

        await self._connections.run(write, write=True)

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every write committed to this project from now on (see
        ChangeFeed.subscribe for when the first subscriber's LISTEN connection is ready)."""
        await self._feed.subscribe(listener)

    async def unsubscribe(self, listener: ChangeListener) -> None:
        """Stop calling listener."""
        await self._feed.unsubscribe(listener)

    async def aclose(self) -> None:
        """Stop listening and close every connection."""
        await self._feed.aclose()
        await self._connections.aclose()


def _record(row: asyncpg.Record) -> Record | UnreadableRecord:
    return record_from_row(row, DIALECT)
