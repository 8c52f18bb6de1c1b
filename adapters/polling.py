"""A change feed for stores that cannot announce their writes: poll them, and tell the changes.

SQLite, the files backend and a remote daemon have no LISTEN/NOTIFY, yet an engine's editor
clients must hear when another process writes. Every few seconds the feed reads the store's
change marker (one cheap read); only when it moved does it read each live record's revision,
and it announces every name whose revision moved or that is no longer live. The engine's own
writes are announced at once from their results, without reading the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from lazy_memory.engine.errors import LazyMemoryError
from lazy_memory.engine.ports import Change, ChangeListener, Storage
from lazy_memory.engine.records import Operation

logger = logging.getLogger(__name__)


def changes_between(before: dict[str, int], after: dict[str, int]) -> list[Change]:
    """The saves and removals that lead from one set of live revisions to the next, by name.

    A removal's tombstone revision is not in either set; it is announced as the revision after
    the last one seen, the least it can be.
    """
    saved = [
        Change(name=name, revision=revision, operation=Operation.SAVE)
        for name, revision in after.items()
        if before.get(name) != revision
    ]
    removed = [
        Change(name=name, revision=revision + 1, operation=Operation.REMOVE)
        for name, revision in before.items()
        if name not in after
    ]
    return sorted(saved + removed, key=lambda change: change.name)


class PollingFeed:
    """A ChangeFeed over any Storage: polls its live revisions while anyone listens."""

    def __init__(self, storage: Storage, interval_seconds: float) -> None:
        self._storage = storage
        self._interval = interval_seconds
        self._listeners: list[ChangeListener] = []
        self._seen: dict[str, int] | None = None
        self._marker: str | None = None
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every change seen from now on; polling starts with the first."""
        self._listeners.append(listener)
        if self._task is None:
            # Set before the first poll yields: subscribers arriving meanwhile (a daemon's
            # burst of connections) would each start a loop, and all but the last run forever.
            self._task = asyncio.create_task(self._poll_forever())
            await self.poll()

    async def unsubscribe(self, listener: ChangeListener) -> None:
        """Stop calling listener; polling stops with the last one."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)
        if not self._listeners and self._task is not None:
            # Cleared before waiting, so a subscriber arriving meanwhile starts a new loop.
            task, self._task, self._seen, self._marker = self._task, None, None, None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def poll(self) -> None:
        """Announce what changed since the last look, if the store's change marker moved."""
        async with self._lock:
            try:
                marker = await self._storage.change_marker()
                if marker == self._marker:
                    return
                revisions = await self._storage.live_revisions()
            except LazyMemoryError as error:
                logger.warning("cannot poll the store for changes: %s", error.message)
                return
            changes = [] if self._seen is None else changes_between(self._seen, revisions)
            self._seen, self._marker = revisions, marker
        for change in changes:
            self._tell(change)

    def announce(self, change: Change) -> None:
        """Tell listeners of a write this process made, and count it as seen."""
        if self._seen is not None:
            if change.operation is Operation.REMOVE:
                self._seen.pop(change.name, None)
            else:
                self._seen[change.name] = change.revision
        self._tell(change)

    def _tell(self, change: Change) -> None:
        for listener in list(self._listeners):
            listener(change)

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.poll()
