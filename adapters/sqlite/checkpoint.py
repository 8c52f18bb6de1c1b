"""The SQLite backend's background checkpoints: the WAL copied back off every commit's path."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lazy_memory.adapters.sqlite.connections import close, connect

CHECKPOINT_WRITES = 100
"""Writes between two background checkpoints."""

logger = logging.getLogger(__name__)


class Checkpointer:
    """Copies the WAL back into the database in the background, off every commit's path.

    SQLite's automatic checkpoint runs inside the commit that crosses its threshold, two
    fsyncs included: the one save that pays waits milliseconds (tens on a busy disk), and an
    inline save holds up the event loop meanwhile. Here, every CHECKPOINT_WRITES writes, a
    PASSIVE checkpoint (it never waits for, or blocks, readers and writers) runs on a thread
    and connection of its own. The automatic checkpoint stays (sqlite/writer.py), as a
    bound on the WAL for stores that only short-lived processes write to.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._running: asyncio.Future[None] | None = None
        self._writes = 0

    def wrote(self) -> None:
        """Count one write; start a checkpoint if enough were made and none is running."""
        self._writes += 1
        if self._writes < CHECKPOINT_WRITES or not (self._running is None or self._running.done()):
            return
        self._writes = 0
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazy-wal")
        self._running = asyncio.get_running_loop().run_in_executor(self._thread, self._checkpoint)

    async def aclose(self) -> None:
        """Wait for a running checkpoint, then close the connection and end the thread."""
        if self._running is not None:
            await asyncio.wait([self._running])
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                close(self._connection)
            self._connection = None
        if self._thread is not None:
            self._thread.shutdown(wait=False)

    def _checkpoint(self) -> None:
        # A checkpoint that cannot run now is only put off: the next one, or SQLite's own,
        # copies the same pages.
        try:
            if self._connection is None:
                self._connection = connect(self._path)
            self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:
            logger.debug("background checkpoint of %s skipped: %s", self._path, error)
