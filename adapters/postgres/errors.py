"""What each PostgreSQL driver error means to an operation: another try, or which typed error.

asyncpg raises four families, and each becomes a typed error here; none reaches the engine
untyped (JSON-RPC -32603, exit status 70):

- PostgresError, the server's SQLSTATE errors: a lost or refused connection, a server
  restarting, too many connections, a serialization failure or deadlock, and a cached
  statement whose result type a schema change altered, are worth another try; the rest (a
  missing table, a statement timeout, a permission) are not.
- InterfaceError, the client side's: a connection in the wrong state ("connection is
  closed", "another operation is in progress") is worth another try on a fresh connection;
  a bad DSN option (ClientConfigurationError) is InvalidConfig; an argument the driver
  cannot encode or a feature it lacks is final.
- InternalClientError, the driver's own faults: ProtocolError (the stream out of step),
  OutdatedSchemaCacheError (its type cache behind a schema change; asyncpg drops it) and the
  rest are worth another try on a fresh connection; TargetServerAttributeNotMatched (no host
  fits target_session_attrs, as during a failover) counts as an unreachable server.
- OSError, the socket's: an unreachable server, except a timeout, which would take as long
  again.

Another try is only made where it is safe (a read, or a write that failed before COMMIT, its
transaction rolled back whole); that is the caller's part (adapters/postgres/connections.py).
"""

from __future__ import annotations

import contextlib

import asyncpg
from asyncpg.exceptions import _base as driver
from asyncpg.transaction import Transaction

from lazy_memory.adapters.postgres.retry import no_answer, reason
from lazy_memory.engine.errors import InvalidConfig, LazyMemoryError, StorageUnavailable

DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, driver.InternalClientError, OSError)
"""Everything the driver raises on purpose: all of it becomes a typed error."""
UNREACHABLE = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
    driver.TargetServerAttributeNotMatched,
)
"""The server is down, restarting, full, or cut the connection: retried within the connect
timeout."""
_FINAL_CLIENT_ERRORS = (
    driver.ClientConfigurationError,
    driver.DataError,
    driver.UnsupportedClientFeatureError,
    driver.UnsupportedServerFeatureError,
)
"""Client-side errors another try would only repeat."""
_TRANSIENT = (
    *UNREACHABLE,
    asyncpg.TransactionRollbackError,
    asyncpg.InvalidCachedStatementError,
    driver.InternalClientError,
    asyncpg.InterfaceError,
)
CUT_OFF = (*UNREACHABLE, asyncpg.InterfaceError, driver.InternalClientError)
"""Failures that leave a COMMIT in flight without an answer: it may or may not have happened."""


def is_transient(error: BaseException) -> bool:
    """Whether another try of the same operation may succeed."""
    if isinstance(error, (TimeoutError, *_FINAL_CLIENT_ERRORS)):
        return False
    return isinstance(error, _TRANSIENT)


def spoils_connection(error: BaseException) -> bool:
    """Whether the connection error came from is in a state no operation should inherit."""
    client_side = isinstance(error, asyncpg.InterfaceError | driver.InternalClientError)
    return client_side and not isinstance(error, _FINAL_CLIENT_ERRORS)


def typed_error(
    error: BaseException, where: str, connect_timeout: float, *, connecting: bool = False
) -> LazyMemoryError:
    """The typed error a driver error that is not tried again becomes."""
    if isinstance(error, driver.ClientConfigurationError):
        return InvalidConfig(
            f"the PostgreSQL DSN (LAZY_PG_DSN or [storage] pg_dsn) for {where} cannot be used: "
            f"{reason(error)}"
        )
    if connecting and isinstance(error, TimeoutError):
        return no_answer(where, connect_timeout)
    verb = "reach" if isinstance(error, UNREACHABLE) else "use"
    return StorageUnavailable(f"cannot {verb} PostgreSQL at {where}: {reason(error)}")


async def roll_back(transaction: Transaction, error: BaseException) -> None:
    """Roll back a write that failed with error, keeping that error whatever happens."""
    if spoils_connection(error):
        return  # the connection is closed next, which rolls back on the server
    # On a lost connection the rollback fails too, and the server has rolled back already.
    with contextlib.suppress(*DRIVER_ERRORS):
        await transaction.rollback()
