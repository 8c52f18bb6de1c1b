"""The PostgreSQL change feed: each write's NOTIFY, and the LISTEN connection that hears them.

A write announces itself with pg_notify in its own transaction, which PostgreSQL delivers
only once the transaction commits. One LISTEN connection per store hears every project's
announcements and hands its own project's to the subscribers. It reconnects with backoff
whenever it is lost; writes committed while it is down are not announced: a subscriber that
must not miss any re-reads the store after a gap, which the log reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING, Any

import asyncpg

from lazy_memory.adapters.postgres.errors import DRIVER_ERRORS, typed_error
from lazy_memory.adapters.postgres.retry import backoff
from lazy_memory.engine.errors import LazyMemoryError
from lazy_memory.engine.ports import Change, ChangeListener
from lazy_memory.engine.records import HistoryEntry

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

CHANNEL = "lazy_memory"
"""The NOTIFY channel every write announces itself on, as JSON {project, name, revision,
operation}."""
LISTEN_READY_SECONDS = 5.0
"""How long subscribe waits at most for the first try at a LISTEN connection to end."""
LISTEN_MAX_BACKOFF_SECONDS = 30.0

logger = logging.getLogger(__name__)


async def announce(connection: PoolConnectionProxy[Any], project: str, entry: HistoryEntry) -> None:
    """Announce entry's write on CHANNEL, heard once connection's transaction commits."""
    announcement = {
        "project": project,
        "name": entry.name,
        "revision": entry.revision,
        "operation": entry.operation.value,
    }
    await connection.execute("SELECT pg_notify($1, $2)", CHANNEL, json.dumps(announcement))


class ChangeFeed:
    """The subscribers of one project, and the LISTEN connection that feeds them."""

    def __init__(self, dsn: str, project: str, where: str, connect_timeout: float) -> None:
        self._dsn = dsn
        self._project = project
        self._where = where
        self._connect_timeout = connect_timeout
        self._listeners: list[ChangeListener] = []
        self._listening: asyncio.Task[None] | None = None
        self._first_listen_tried = asyncio.Event()

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every write committed to the project from now on.

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
        """Stop listening."""
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
            self._listening = None

    async def _listen(self) -> None:
        """Hold a LISTEN connection, reconnecting with backoff whenever it is lost, until closed."""
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
            logger.warning("the change feed from %s is back", self._where)
        await lost.wait()
        logger.warning(
            "lost the change feed from %s; reconnecting (writes made meanwhile are not announced)",
            self._where,
        )

    def _deliver(self, _connection: object, _pid: int, _channel: str, payload: object) -> None:
        """Hand a notification of this project to every subscriber; ignore the others'."""
        try:
            announced = json.loads(str(payload))
            if announced.get("project") != self._project:
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

    def _unavailable(self, error: BaseException, *, connecting: bool = False) -> LazyMemoryError:
        return typed_error(error, self._where, self._connect_timeout, connecting=connecting)
