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
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import LazyMemoryError, StorageUnavailable
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import Actor, HistoryEntry, Operation, Record, RecordContent
from lazy_memory.engine.search_model import SearchHit, SearchQuery

logger = logging.getLogger(__name__)
Opener = Callable[[], Awaitable[Storage]]


class ReopeningStorage:
    """A Storage that opens the real one on first use, and tries again after each failure."""

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

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        return await (await self._store()).list_records()

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name."""
        return await (await self._store()).list_index()

    async def change_marker(self) -> str:
        """The real store's marker."""
        return await (await self._store()).change_marker()

    async def recall_record(self, name: str) -> Record:
        """The live record called name."""
        return await (await self._store()).recall_record(name)

    async def save_record(
        self,
        content: RecordContent,
        *,
        actor: Actor,
        at: datetime,
        operation: Operation = Operation.SAVE,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record in the real store."""
        store = await self._store()
        return await store.save_record(
            content, actor=actor, at=at, operation=operation, if_revision=if_revision
        )

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record in the real store."""
        return await (await self._store()).remove_record(name, actor=actor, at=at)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """The real store's history, or one name's."""
        return await (await self._store()).history(name)

    async def spellings(self, name: str) -> list[str]:
        """The real store's spellings of name."""
        return await (await self._store()).spellings(name)

    async def unreadable_records(self) -> list[UnreadableRecord]:
        """The real store's records that cannot be read."""
        return await (await self._store()).unreadable_records()

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        return await (await self._store()).live_revisions()

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        return await (await self._store()).removed_since(watermark)

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The real store's best hits for query."""
        return await (await self._store()).search(query, limit)

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        return await (await self._store()).get_compact()

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot."""
        await (await self._store()).put_compact(compact)

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        await (await self._store()).clear_compact()

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


async def open_or_reopening(opener: Opener) -> Storage:
    """The store opener gives, or, when it fails, a ReopeningStorage that tries again later.

    The failure is logged loudly: it is the one line that says why a launch shows no index.
    """
    try:
        return await opener()
    except LazyMemoryError as error:
        logger.error("the store cannot be opened; serving anyway and retrying on use: %s", error)
        return ReopeningStorage(opener, error)
