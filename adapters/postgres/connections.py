"""Running an operation on a pooled PostgreSQL connection: the one place driver errors are typed.

`Connections.run` is the one place asyncpg and OS errors become typed errors (which ones are
worth another try, and what the others become: postgres/errors.py). Transient failures (a
lost or refused connection, a server restarting, a serialization failure, a deadlock, too
many connections, a connection or a driver cache in a bad state) are retried with
exponential backoff, a bounded number of times (postgres/retry.py), and a server that cannot
be reached only within the connect timeout: reads always, writes only when the failure came
before COMMIT, since a failed transaction is rolled back whole. A connection in a state the
driver cannot vouch for is closed, never handed back to the pool. A connection lost during
COMMIT leaves the outcome unknown, and the error says so instead of retrying. The first
operation brings the schema up to date (postgres/schema.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg

from lazy_memory.adapters.postgres.errors import (
    CUT_OFF,
    DRIVER_ERRORS,
    UNREACHABLE,
    is_transient,
    roll_back,
    spoils_connection,
    typed_error,
)
from lazy_memory.adapters.postgres.retry import ATTEMPTS, Retries, reason
from lazy_memory.adapters.postgres.schema import migrate
from lazy_memory.engine.errors import LazyMemoryError, StorageUnavailable

_T = TypeVar("_T")
if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Connection = PoolConnectionProxy[Any]
    Work = Callable[[Connection], Awaitable[_T]]

CLOSE_TIMEOUT_SECONDS = 10.0

logger = logging.getLogger(__name__)


class Connections:
    """A pool of connections to the database at where, and the operations run on it."""

    def __init__(self, pool: asyncpg.Pool[Any], where: str, connect_timeout: float) -> None:
        self._pool = pool
        self._where = where
        self._connect_timeout = connect_timeout
        self._schema_ready = False
        self._schema_lock = asyncio.Lock()

    async def fetch(self, sql: str, *arguments: Any) -> list[asyncpg.Record]:
        """The rows of one read."""

        async def read(connection: Connection) -> list[asyncpg.Record]:
            return await connection.fetch(sql, *arguments)

        return await self.run(read, write=False)

    async def run(self, work: Work[_T], *, write: bool) -> _T:
        """Run work on a pooled connection (a write in one transaction), retrying what is safe.

        The first operation brings the schema up to date beforehand.
        """
        if not self._schema_ready:
            async with self._schema_lock:
                if not self._schema_ready:
                    await self._retried(self._migrate, write=True)
                    self._schema_ready = True
        return await self._retried(work, write=write)

    async def aclose(self) -> None:
        """Close every connection."""
        # Closing waits for connections in use; a wedged one is cut off after this long.
        try:
            await asyncio.wait_for(self._pool.close(), CLOSE_TIMEOUT_SECONDS)
        except (TimeoutError, *DRIVER_ERRORS):
            self._pool.terminate()

    async def _migrate(self, connection: Connection) -> None:
        await migrate(connection, f"the PostgreSQL database at {self._where}")

    async def _retried(self, work: Work[_T], *, write: bool) -> _T:
        """run without the schema check: the one place driver errors become typed errors."""
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
                        f"lost PostgreSQL at {self._where} while committing a write "
                        f"({reason(error)}): it may or may not have been applied"
                    ) from None
                # A pool being closed says so with an InterfaceError: that is final.
                transient = is_transient(error) and not self._pool.is_closing()
                unreachable = isinstance(error, UNREACHABLE)
                pause = retries.pause(attempt, unreachable=unreachable) if transient else None
                if pause is None:
                    raise typed_error(
                        error, self._where, self._connect_timeout, connecting=not connected
                    ) from None
                logger.info("PostgreSQL at %s: %s; retrying", self._where, reason(error))
                await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")
