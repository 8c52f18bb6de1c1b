"""The PostgreSQL backend: one database shared by many projects, machines and processes.

Every row carries its project's key, so projects sharing a database never see each other's
records. A write is one transaction: it takes a transaction-level advisory lock on
(project, name), reads the name's latest revision, writes the record row, appends the
history entry numbered by the project's counter row (locked until commit, so history order
is commit order, without gaps) and announces the write with pg_notify, which PostgreSQL
delivers only once the transaction commits.

Faults: `_run` is the one place asyncpg and OS errors become typed errors (which ones are
worth another try, and what the others become: adapters/postgres_errors.py). Transient
failures (a lost or refused connection, a server restarting, a serialization failure, a
deadlock, too many connections, a connection or a driver cache in a bad state) are retried
with exponential backoff, a bounded number of times (adapters/postgres_retry.py), and a
server that cannot be reached only within the connect timeout: reads always, writes only
when the failure came before COMMIT, since a failed transaction is rolled back whole. A
connection in a state the driver cannot vouch for is closed, never handed back to the pool.
A connection lost during COMMIT leaves the outcome unknown, and the error says so instead of
retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import asyncpg

from lazy_memory.adapters.config import DEFAULT_CONNECT_TIMEOUT_SECONDS
from lazy_memory.adapters.migrations import unapplied
from lazy_memory.adapters.postgres_errors import (
    CUT_OFF,
    DRIVER_ERRORS,
    UNREACHABLE,
    is_transient,
    roll_back,
    spoils_connection,
    typed_error,
)
from lazy_memory.adapters.postgres_retry import ATTEMPTS, Retries, backoff, reason
from lazy_memory.adapters.postgres_schema import MIGRATIONS, MIGRATIONS_TABLE
from lazy_memory.adapters.postgres_search import candidate_query, ranked, search_columns
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import (
    Conflict,
    InvalidConfig,
    LazyMemoryError,
    NotFound,
    StorageUnavailable,
)
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.ports import Change, ChangeListener
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
    record_after,
)
from lazy_memory.engine.search import SearchHit, SearchQuery

CHANNEL = "lazy_memory"
"""The NOTIFY channel every write announces itself on, as JSON {project, name, revision,
operation}."""

POOL_MAX_SIZE = 4
CLOSE_TIMEOUT_SECONDS = 10.0
COMMAND_TIMEOUT_SECONDS = 60.0
LISTEN_READY_SECONDS = 5.0
"""How long subscribe waits at most for the first try at a LISTEN connection to end."""
LISTEN_MAX_BACKOFF_SECONDS = 30.0

_MIGRATION_LOCK = 0x6C617A79_6D656D6F
"""The advisory lock key ("lazymemo") that serializes schema migrations across processes."""
_RECORD_COLUMNS = (
    "name, type, description, body, provenance, revision, updated_at, actor_kind, actor_detail"
)
_HISTORY_COLUMNS = (
    "name, type, description, body, provenance, revision, operation, at, actor_kind, actor_detail"
)
# PostgreSQL's text cannot hold NUL, and records may: NUL is stored as this character
# followed by "0", and the character itself doubled.
_ESCAPE = "\uffff"
_ESCAPED = re.compile(f"{_ESCAPE}(.)", re.DOTALL)

_TYPES = {member.value: member for member in RecordType}

_T = TypeVar("_T")
if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[Any]
    Work = Callable[[Connection], Awaitable[_T]]

logger = logging.getLogger(__name__)


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
        self._pool = pool
        self._dsn = dsn
        self._connect_timeout = connect_timeout
        self.project = project
        self.where = describe(dsn)
        self._listeners: list[ChangeListener] = []
        self._listening: asyncio.Task[None] | None = None
        self._first_listen_tried = asyncio.Event()
        self._schema_ready = False
        self._schema_lock = asyncio.Lock()

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
        _check_dsn(dsn)
        pool = asyncpg.create_pool(
            dsn,
            min_size=0,
            max_size=POOL_MAX_SIZE,
            timeout=connect_timeout,
            command_timeout=COMMAND_TIMEOUT_SECONDS,
        )
        return cls(await pool, dsn, project, connect_timeout)

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        rows = await self._fetch(
            f"SELECT {_RECORD_COLUMNS} FROM lazy_records "
            "WHERE project = $1 AND NOT deleted ORDER BY name",
            self.project,
        )
        return [_record(row) for row in rows]

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name; bodies are never read."""
        rows = await self._fetch(
            "SELECT name, type, description, revision, updated_at FROM lazy_records "
            "WHERE project = $1 AND NOT deleted ORDER BY name",
            self.project,
        )
        # asyncpg hands TIMESTAMPTZ over as an aware datetime: nothing to parse per row.
        return [
            IndexEntry(_loaded(name), _TYPES[type_], _loaded(description), revision, updated_at)
            for name, type_, description, revision, updated_at in rows
        ]

    async def change_marker(self) -> str:
        """The version of the project's counter row: every write of any kind updates it.

        A record write takes the next history number from the row; a compact write updates
        the row without changing its number. Each makes a new row version, stamped with the
        writing transaction's id (xmin), which no earlier write of the project had.
        """
        rows = await self._fetch(
            "SELECT last_seq, xmin::text FROM lazy_projects WHERE project = $1", self.project
        )
        return "0:none" if not rows else f"{rows[0]['last_seq']}:{rows[0]['xmin']}"

    async def get_record(self, name: str) -> Record:
        """The live record called name."""
        rows = await self._fetch(
            f"SELECT {_RECORD_COLUMNS} FROM lazy_records "
            "WHERE project = $1 AND name = $2 AND NOT deleted",
            self.project,
            _stored(name),
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

        async def write(connection: Connection) -> HistoryEntry:
            current = await self._lock_name(connection, content.name)
            if if_revision is not None and if_revision != current:
                raise Conflict(
                    f"{content.name!r} is at revision {current}, not {if_revision}: "
                    "reload it and try again"
                )
            entry = history_entry(
                content, revision=current + 1, operation=operation, actor=actor, at=at
            )
            await self._append(connection, entry, deleted=False)
            return entry

        return record_after(await self._run(write, write=True))

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision."""

        async def write(connection: Connection) -> HistoryEntry:
            await self._lock_name(connection, name)
            row = await connection.fetchrow(
                f"SELECT {_RECORD_COLUMNS} FROM lazy_records "
                "WHERE project = $1 AND name = $2 AND NOT deleted",
                self.project,
                _stored(name),
            )
            if row is None:
                raise NotFound(f"no record named {name!r}")
            live = _record(row)
            entry = history_entry(
                live, revision=live.revision + 1, operation=Operation.REMOVE, actor=actor, at=at
            )
            await self._append(connection, entry, deleted=True)
            return entry

        return await self._run(write, write=True)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in write order, or those of one name."""
        if name is None:
            rows = await self._fetch(
                f"SELECT {_HISTORY_COLUMNS} FROM lazy_history WHERE project = $1 ORDER BY seq",
                self.project,
            )
        else:
            rows = await self._fetch(
                f"SELECT {_HISTORY_COLUMNS} FROM lazy_history "
                "WHERE project = $1 AND name = $2 ORDER BY seq",
                self.project,
                _stored(name),
            )
        return [_history_entry(row) for row in rows]

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        rows = await self._fetch(
            "SELECT name, revision FROM lazy_records WHERE project = $1 AND NOT deleted",
            self.project,
        )
        return {_loaded(row["name"]): row["revision"] for row in rows}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        rows = await self._fetch(
            "SELECT name FROM lazy_records "
            "WHERE project = $1 AND deleted AND name = ANY($2::text[]) ORDER BY name",
            self.project,
            [_stored(name) for name in watermark],
        )
        return [_loaded(row["name"]) for row in rows]

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, ranked as every backend ranks them."""
        sql, arguments = self._search_candidates(query)
        rows = await self._fetch(sql, self.project, *arguments)
        if not rows:
            return []
        candidates = [
            RecordContent(
                name=_loaded(row["name"]),
                type=RecordType(row["type"]),
                description=_loaded(row["description"]),
                body=_loaded(row["body"]),
            )
            for row in rows
        ]
        return ranked(query, limit, candidates, rows[0]["records"], rows[0]["tokens"])

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        rows = await self._fetch(
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
            await self._touch_project(connection)

        await self._run(write, write=True)

    async def clear_compact(self) -> None:
        """Empty the compact slot."""

        async def write(connection: Connection) -> None:
            await connection.execute("DELETE FROM lazy_compacts WHERE project = $1", self.project)
            await self._touch_project(connection)

        await self._run(write, write=True)

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every write committed to this project from now on.

        The first subscriber opens the LISTEN connection and waits for that first try (a few
        seconds at most), so changes committed after subscribe returns are announced; if the
        try failed, the connection is retried in the background.
        """
        self._listeners.append(listener)
        if self._listening is None:
            self._listening = asyncio.create_task(self._listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._first_listen_tried.wait(), LISTEN_READY_SECONDS)

    async def unsubscribe(self, listener: ChangeListener) -> None:
        """Stop calling listener."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    async def aclose(self) -> None:
        """Stop listening and close every connection."""
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
            self._listening = None
        # Closing waits for connections in use; a wedged one is cut off after this long.
        try:
            await asyncio.wait_for(self._pool.close(), CLOSE_TIMEOUT_SECONDS)
        except (TimeoutError, *DRIVER_ERRORS):
            self._pool.terminate()

    async def _migrate(self, connection: Connection) -> None:
        """Apply the migrations the database lacks, in this transaction.

        The advisory lock makes concurrent first opens safe: one process applies the
        migrations, the others wait for its commit and then find nothing left to do.
        """
        await connection.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
        await connection.execute(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
            "(name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        applied = {
            row["name"] for row in await connection.fetch(f"SELECT name FROM {MIGRATIONS_TABLE}")
        }
        store = f"the PostgreSQL database at {self.where}"
        for name, statements in unapplied(MIGRATIONS, applied, store):
            for statement in statements:
                await connection.execute(statement)
            await connection.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES ($1)", name)

    async def _lock_name(self, connection: Connection, name: str) -> int:
        """Lock name until commit (it may have no row yet) and return its latest revision."""
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))",
            self.project,
            _stored(name),
        )
        # A statement of its own: in READ COMMITTED it sees what the lock's holder committed.
        revision = await connection.fetchval(
            "SELECT revision FROM lazy_records WHERE project = $1 AND name = $2",
            self.project,
            _stored(name),
        )
        return 0 if revision is None else int(revision)

    async def _touch_project(self, connection: Connection) -> None:
        """Give the project's counter row a new version without taking a history number.

        That moves the change marker for a write that appends no history: the compact slot's.
        """
        await connection.execute(
            "INSERT INTO lazy_projects (project, last_seq) VALUES ($1, 0) "
            "ON CONFLICT (project) DO UPDATE SET last_seq = lazy_projects.last_seq",
            self.project,
        )

    async def _append(self, connection: Connection, entry: HistoryEntry, *, deleted: bool) -> None:
        """Make entry the name's current state, append it to the history, and announce it."""
        name, description, body, detail = (
            _stored(text)
            for text in (entry.name, entry.description, entry.body, entry.actor.detail)
        )
        provenance = None if entry.provenance is None else entry.provenance.model_dump_json()
        search = search_columns(entry)
        await connection.execute(
            "INSERT INTO lazy_records (project, name, type, description, body, provenance, "
            "revision, deleted, updated_at, actor_kind, actor_detail, search, search_length) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
            "array_to_tsvector($12::text[]), $13) "
            "ON CONFLICT (project, name) DO UPDATE SET type = excluded.type, "
            "description = excluded.description, body = excluded.body, "
            "provenance = excluded.provenance, revision = excluded.revision, "
            "deleted = excluded.deleted, updated_at = excluded.updated_at, "
            "actor_kind = excluded.actor_kind, actor_detail = excluded.actor_detail, "
            "search = excluded.search, search_length = excluded.search_length",
            self.project,
            name,
            entry.type.value,
            description,
            body,
            provenance,
            entry.revision,
            deleted,
            entry.at,
            entry.actor.kind.value,
            detail,
            search.lexemes,
            search.length,
        )
        await connection.execute(
            "WITH counter AS (INSERT INTO lazy_projects (project, last_seq) VALUES ($1, 1) "
            "ON CONFLICT (project) DO UPDATE SET last_seq = lazy_projects.last_seq + 1 "
            "RETURNING last_seq) "
            "INSERT INTO lazy_history (project, seq, name, revision, operation, type, "
            "description, body, provenance, at, actor_kind, actor_detail) "
            "VALUES ($1, (SELECT last_seq FROM counter), $2, $3, $4, $5, $6, $7, $8, $9, $10, "
            "$11)",
            self.project,
            name,
            entry.revision,
            entry.operation.value,
            entry.type.value,
            description,
            body,
            provenance,
            entry.at,
            entry.actor.kind.value,
            detail,
        )
        announcement = {
            "project": self.project,
            "name": entry.name,
            "revision": entry.revision,
            "operation": entry.operation.value,
        }
        await connection.execute("SELECT pg_notify($1, $2)", CHANNEL, json.dumps(announcement))

    def _search_candidates(self, query: SearchQuery) -> tuple[str, list[Any]]:
        """The SELECT of query's candidates (after $1, the project) and its arguments.

        With words or phrases, every live record holding a term is a candidate, whatever its
        type or name, since the terms' idf counts them all; a query of filters only
        selects by type and name. Each row also carries the project's count of live records
        and of their tokens, read in the same statement, so from the same snapshot.
        """
        sql = (
            "SELECT name, type, description, body, statistics.records, statistics.tokens "
            "FROM lazy_records, (SELECT count(*) AS records, "
            "coalesce(sum(search_length), 0) AS tokens FROM lazy_records "
            "WHERE project = $1 AND NOT deleted) AS statistics "
            "WHERE project = $1 AND NOT deleted"
        )
        arguments: list[Any] = []
        if query.terms:
            tsquery = candidate_query(query)
            if tsquery is not None:
                arguments.append(tsquery)
                sql += " AND (search IS NULL OR search @@ $2::tsquery)"
            return sql, arguments
        if query.types:
            arguments.append([kind.value for kind in query.types])
            sql += f" AND type = ANY(${len(arguments) + 1}::text[])"
        if query.names or query.name_prefixes:
            arguments.append([_stored(name) for name in query.names])
            alternatives = [f"name = ANY(${len(arguments) + 1}::text[])"]
            for prefix in query.name_prefixes:
                arguments.append(_stored(prefix))
                alternatives.append(f"starts_with(name, ${len(arguments) + 1})")
            sql += f" AND ({' OR '.join(alternatives)})"
        return sql, arguments

    async def _fetch(self, sql: str, *arguments: Any) -> list[asyncpg.Record]:
        async def read(connection: Connection) -> list[asyncpg.Record]:
            return await connection.fetch(sql, *arguments)

        return await self._run(read, write=False)

    async def _run(self, work: Work[_T], *, write: bool) -> _T:
        """Run work on a pooled connection (a write in one transaction), retrying what is safe.

        The first operation brings the schema up to date beforehand.
        """
        if not self._schema_ready:
            async with self._schema_lock:
                if not self._schema_ready:
                    await self._retried(self._migrate, write=True)
                    self._schema_ready = True
        return await self._retried(work, write=write)

    async def _retried(self, work: Work[_T], *, write: bool) -> _T:
        """_run without the schema check: the one place driver errors become typed errors."""
        retries = Retries(self._connect_timeout)
        for attempt in range(1, ATTEMPTS + 1):
            committing = finished = connected = False
            try:
                async with self._pool.acquire() as connection:
                    connected = True
                    try:
                        if write:
                            transaction = connection.transaction()
                            await transaction.start()
                            try:
                                result = await work(connection)
                            except BaseException as error:
                                await roll_back(transaction, error)
                                raise
                            committing = True
                            await transaction.commit()
                        else:
                            result = await work(connection)
                    except DRIVER_ERRORS as error:
                        if spoils_connection(error):
                            # Closed, so the pool hands the next operation a new one.
                            connection.terminate()
                        raise
                    finished = True
                return result
            except LazyMemoryError:
                raise
            except DRIVER_ERRORS as error:
                if finished:
                    # Done and committed: only handing the connection back to the pool failed.
                    return result
                if committing and isinstance(error, CUT_OFF):
                    raise StorageUnavailable(
                        f"lost PostgreSQL at {self.where} while committing a write "
                        f"({reason(error)}): it may or may not have been applied"
                    ) from None
                # A pool being closed says so with an InterfaceError: that is final.
                transient = is_transient(error) and not self._pool.is_closing()
                unreachable = isinstance(error, UNREACHABLE)
                pause = retries.pause(attempt, unreachable=unreachable) if transient else None
                if pause is None:
                    raise self._unavailable(error, connecting=not connected) from None
                logger.info("PostgreSQL at %s: %s; retrying", self.where, reason(error))
                await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _unavailable(self, error: BaseException, *, connecting: bool = False) -> LazyMemoryError:
        return typed_error(error, self.where, self._connect_timeout, connecting=connecting)

    async def _listen(self) -> None:
        """Hold a LISTEN connection, reconnecting with backoff whenever it is lost, until closed.

        Writes committed while it is down are not announced: a subscriber that must not miss
        any re-reads the store after a gap, which the log reports.
        """
        failures = 0
        while True:
            try:
                connection = await asyncpg.connect(self._dsn, timeout=self._connect_timeout)
            except DRIVER_ERRORS as error:
                self._first_listen_tried.set()
                failures += 1
                if failures == 1:
                    unavailable = self._unavailable(error, connecting=True)
                    logger.warning("change feed: %s; retrying", unavailable)
                await asyncio.sleep(min(backoff(failures), LISTEN_MAX_BACKOFF_SECONDS))
                continue
            try:
                await self._listen_on(connection, recovered=failures > 0)
            except DRIVER_ERRORS as error:
                self._first_listen_tried.set()
                logger.warning("change feed: %s; reconnecting", self._unavailable(error))
            finally:
                connection.terminate()
            failures = 1
            await asyncio.sleep(backoff(failures))

    async def _listen_on(self, connection: asyncpg.Connection[Any], *, recovered: bool) -> None:
        """Deliver the notifications connection receives until it is lost."""
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        await connection.add_listener(CHANNEL, self._deliver)
        self._first_listen_tried.set()
        if recovered:
            logger.warning("the change feed from %s is back", self.where)
        await lost.wait()
        logger.warning(
            "lost the change feed from %s; reconnecting (writes made meanwhile are not announced)",
            self.where,
        )

    def _deliver(self, _connection: object, _pid: int, _channel: str, payload: object) -> None:
        """Hand a notification of this project to every subscriber; ignore the others'."""
        try:
            announced = json.loads(str(payload))
            if announced.get("project") != self.project:
                return
            change = Change.model_validate(announced)
        except ValueError:
            logger.warning("ignoring a malformed %s notification: %.200s", CHANNEL, payload)
            return
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                logger.exception("a change listener failed")


def describe(dsn: str) -> str:
    """Where a DSN points, as host:port/database, for messages: never its user or password."""
    parts = urlsplit(dsn)
    query = parse_qs(parts.query)
    host = parts.hostname or query.get("host", ["localhost"])[0]
    try:
        port = parts.port or int(query.get("port", ["5432"])[0])
    except ValueError:
        port = 5432
    database = unquote(parts.path.lstrip("/")) or query.get("dbname", [""])[0]
    return f"{host}:{port}/{database or parts.username or 'postgres'}"


def _check_dsn(dsn: str) -> None:
    parts = urlsplit(dsn)
    try:
        parts.port  # noqa: B018  (parsing it is the check)
    except ValueError:
        valid = False
    else:
        valid = parts.scheme in ("postgres", "postgresql")
    if not valid:
        raise InvalidConfig(
            "the PostgreSQL DSN (LAZY_PG_DSN or [storage] pg_dsn) must be a URI like "
            "postgresql://user@host:5432/database"
        )


def _stored(text: str) -> str:
    """text as a PostgreSQL text column can hold it: NUL (and the escape) escaped."""
    if "\x00" not in text and _ESCAPE not in text:
        return text
    return text.replace(_ESCAPE, _ESCAPE * 2).replace("\x00", _ESCAPE + "0")


def _loaded(text: str) -> str:
    """The text _stored was given."""
    if _ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda match: "\x00" if match[1] == "0" else match[1], text)


def _record(row: asyncpg.Record) -> Record:
    return Record(
        name=_loaded(row["name"]),
        type=RecordType(row["type"]),
        description=_loaded(row["description"]),
        body=_loaded(row["body"]),
        provenance=_provenance(row["provenance"]),
        revision=row["revision"],
        updated_at=row["updated_at"],
        updated_by=Actor(kind=ActorKind(row["actor_kind"]), detail=_loaded(row["actor_detail"])),
    )


def _history_entry(row: asyncpg.Record) -> HistoryEntry:
    return HistoryEntry(
        name=_loaded(row["name"]),
        type=RecordType(row["type"]),
        description=_loaded(row["description"]),
        body=_loaded(row["body"]),
        provenance=_provenance(row["provenance"]),
        revision=row["revision"],
        operation=Operation(row["operation"]),
        at=row["at"],
        actor=Actor(kind=ActorKind(row["actor_kind"]), detail=_loaded(row["actor_detail"])),
    )


def _provenance(stored: str | None) -> Provenance | None:
    return None if stored is None else Provenance.model_validate_json(stored)
