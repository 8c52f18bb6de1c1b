"""Live pages: the store's change feed fanned out to every open page as server-sent events.

One subscription to the feed serves the whole process (PostgreSQL's NOTIFY, the files
backend's own feed, or adapters/polling.py's PollingFeed over any other store). Each change
gets a sequence number and is kept in a short backlog, and every page is rendered with the
number it was rendered at (`data-since` on its body): a page whose event stream connects, or
reconnects (the browser sends `Last-Event-ID`), after a change it has not shown hears of it
all the same. The browser side is static/live.js: a banner saying what changed, and the page's
content fetched again in place, without a reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator

from lazy_memory.engine.ports import Change, ChangeFeed
from lazy_memory.engine.records import Operation
from lazy_memory.engine.visible import visible_line

BACKLOG = 256
"""Changes kept for pages that connect late; one further behind is told to refresh."""
KEEPALIVE_SECONDS = 15.0
"""A comment line this often keeps proxies from closing a quiet stream."""
_QUEUE_SIZE = 1
"""A stream's queue only wakes it: what it sends comes from the backlog."""


def describe(change: Change) -> str:
    """The banner's sentence for a change; the name made visible like every stored string."""
    name = visible_line(change.name)
    if change.operation is Operation.REMOVE:
        return f"{name} was removed (revision {change.revision})"
    return f"{name} was saved (revision {change.revision})"


def event(sequence: int, change: Change | None) -> bytes:
    """One server-sent event: a change, or (None) a `reset` for a page too far behind."""
    data: dict[str, object]
    if change is None:
        data = {"message": "the store changed", "name": None}
        return f"id: {sequence}\nevent: reset\ndata: {json.dumps(data)}\n\n".encode()
    data = {
        "message": describe(change),
        "name": visible_line(change.name),
        "revision": change.revision,
        "operation": change.operation.value,
    }
    return f"id: {sequence}\nevent: change\ndata: {json.dumps(data)}\n\n".encode()


class ChangeBroadcast:
    """Every change the feed announces, numbered, handed to each open event stream."""

    def __init__(self, feed: ChangeFeed, keepalive_seconds: float = KEEPALIVE_SECONDS) -> None:
        self._feed = feed
        self._keepalive = keepalive_seconds
        self._sequence = 0
        self._backlog: deque[tuple[int, Change]] = deque(maxlen=BACKLOG)
        self._queues: set[asyncio.Queue[int | None]] = set()
        self._closed = False

    @property
    def sequence(self) -> int:
        """The number of the last change heard: what a page rendered now has seen."""
        return self._sequence

    async def start(self) -> None:
        """Subscribe to the feed for the life of the process."""
        await self._feed.subscribe(self._heard)

    async def aclose(self) -> None:
        """End every stream and unsubscribe."""
        self.close()
        await self._feed.unsubscribe(self._heard)

    def close(self) -> None:
        """End every stream (on shutdown: a stream never ends by itself)."""
        self._closed = True
        for queue in self._queues:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    async def stream(self, since: int) -> AsyncIterator[bytes]:
        """The events after change number since, then each new one as it comes."""
        queue: asyncio.Queue[int | None] = asyncio.Queue(_QUEUE_SIZE)
        self._queues.add(queue)
        try:
            yield b"retry: 2000\n\n"
            chunks, sent = self._after(since)
            for chunk in chunks:
                yield chunk
            while not self._closed:
                try:
                    woken = await asyncio.wait_for(queue.get(), self._keepalive)
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if woken is None:
                    break
                chunks, sent = self._after(sent)
                for chunk in chunks:
                    yield chunk
        finally:
            self._queues.discard(queue)

    def _after(self, since: int) -> tuple[list[bytes], int]:
        """The events a stream that has seen change number since is owed, and the last number."""
        if since == self._sequence:
            return [], since
        oldest = self._backlog[0][0] if self._backlog else self._sequence + 1
        # Numbers from before a restart (ahead of this process's), or older than the backlog.
        if since > self._sequence or since < oldest - 1:
            return [event(self._sequence, None)], self._sequence
        owed = [event(number, change) for number, change in self._backlog if number > since]
        return owed, self._sequence

    def _heard(self, change: Change) -> None:
        self._sequence += 1
        self._backlog.append((self._sequence, change))
        for queue in self._queues:
            # A full queue already holds a wake-up.
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(self._sequence)
