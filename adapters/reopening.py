"""A store that could not be opened, opened again on each use until it can be.

`lazy engine`, `lazy mcp` and the launch hook must start whatever state the store is in (a
corrupt file, a read-only directory, a daemon or PostgreSQL that is down): a launch that
fails or hangs shows the model no memory at all, which it cannot tell from an empty store.
So when the first open fails, these processes serve through a ReopeningStorage: every call
tries to open the real store, and until that works each one raises the open's typed error
(StorageUnavailable, InvalidConfig), which reads render as the UNAVAILABLE marker and writes
return as errors. Once an open succeeds, every later call goes straight to that store, so a
repaired store is picked up without a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from lazy_memory.engine.errors import LazyMemoryError, StorageUnavailable
from lazy_memory.engine.ports import Storage
from lazy_memory.wire.storage_contract import ArgsP, ForwardingStorage, ReturnT, StorageMethod

logger = logging.getLogger(__name__)
Opener = Callable[[], Awaitable[Storage]]


class ReopeningStorage(ForwardingStorage):
    """A Storage that opens the real one on first use, and tries again after each failure.

    Each port method is a row of the storage contract (wire/storage_contract.py), called on
    the real store by _forward.
    """

    def __init__(self, opener: Opener, first_error: LazyMemoryError) -> None:
        self._opener = opener
        self._storage: Storage | None = None
        self._last_error = first_error
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def is_open(self) -> bool:
        """Whether the real store has been opened."""
        return self._storage is not None

    async def _forward(
        self, method: StorageMethod[ArgsP, ReturnT], *args: ArgsP.args, **kwargs: ArgsP.kwargs
    ) -> ReturnT:
        """method's call on the real store, once it opens."""
        return await method.call(await self._store(), *args, **kwargs)

    async def aclose(self) -> None:
        """Close the real store, if it was ever opened."""
        async with self._lock:
            self._closed = True
            storage, self._storage = self._storage, None
        if storage is not None:
            await storage.aclose()

    async def _store(self) -> Storage:
        if self._storage is not None:
            return self._storage
        async with self._lock:
            if self._closed:
                raise StorageUnavailable("the store has been closed")
            if self._storage is None:
                try:
                    self._storage = await self._opener()
                except LazyMemoryError as error:
                    if error.message != self._last_error.message:
                        logger.error("the store still cannot be opened: %s", error)
                    self._last_error = error
                    raise
                logger.warning("the store is open now, after: %s", self._last_error)
            return self._storage


def reopening_store(opener: Opener, error: LazyMemoryError) -> Storage:
    """A ReopeningStorage for the store opener failed to open with error.

    The failure is logged loudly: it is the one line that says why a launch shows no index.
    """
    logger.error("the store cannot be opened; serving anyway and retrying on use: %s", error)
    return ReopeningStorage(opener, error)
