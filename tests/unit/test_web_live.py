"""The web view's change broadcast: every change reaches every page, late ones included."""

from __future__ import annotations

import asyncio
import json

from lazy_memory.engine.ports import Change, ChangeListener
from lazy_memory.engine.records import Operation
from lazy_memory.rpc.web.live import BACKLOG, ChangeBroadcast


class FakeFeed:
    """A ChangeFeed the test announces changes on."""

    def __init__(self) -> None:
        self.listeners: list[ChangeListener] = []

    async def subscribe(self, listener: ChangeListener) -> None:
        self.listeners.append(listener)

    async def unsubscribe(self, listener: ChangeListener) -> None:
        self.listeners.remove(listener)

    def announce(self, name: str, revision: int, operation: Operation = Operation.SAVE) -> None:
        for listener in self.listeners:
            listener(Change(name=name, revision=revision, operation=operation))


def _events(chunks: list[bytes]) -> list[tuple[str, dict[str, object]]]:
    found = []
    for chunk in chunks:
        fields = dict(line.split(": ", 1) for line in chunk.decode().splitlines() if ": " in line)
        if "event" in fields:
            found.append((fields["event"], json.loads(fields["data"])))
    return found


async def _read(stream, count: int) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [await asyncio.wait_for(anext(stream), 2) for _ in range(count)]


async def test_a_page_hears_what_changed_after_it_was_rendered() -> None:
    feed = FakeFeed()
    broadcast = ChangeBroadcast(feed)
    await broadcast.start()
    feed.announce("before", 1)
    rendered_at = broadcast.sequence
    feed.announce("between\x1b[2J", 2)  # after the page was read, before its stream connected
    stream = broadcast.stream(rendered_at)
    chunks = await _read(stream, 2)
    feed.announce("after", 1, Operation.REMOVE)
    chunks += await _read(stream, 1)
    assert _events(chunks) == [
        (
            "change",
            {
                "message": "between\\x1b[2J was saved (revision 2)",
                "name": "between\\x1b[2J",
                "revision": 2,
                "operation": "save",
            },
        ),
        (
            "change",
            {
                "message": "after was removed (revision 1)",
                "name": "after",
                "revision": 1,
                "operation": "rm",
            },
        ),
    ]
    await broadcast.aclose()
    assert feed.listeners == []


async def test_a_page_too_far_behind_or_from_before_a_restart_is_told_to_refresh() -> None:
    feed = FakeFeed()
    broadcast = ChangeBroadcast(feed)
    await broadcast.start()
    for revision in range(BACKLOG + 5):
        feed.announce("busy", revision + 1)
    for since in (0, broadcast.sequence + 100):
        chunks = await _read(broadcast.stream(since), 2)
        assert [kind for kind, _ in _events(chunks)] == ["reset"]


async def test_closing_ends_every_stream() -> None:
    feed = FakeFeed()
    broadcast = ChangeBroadcast(feed)
    await broadcast.start()
    stream = broadcast.stream(0)
    await _read(stream, 1)
    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    broadcast.close()
    try:
        await asyncio.wait_for(waiting, 2)
    except StopAsyncIteration:
        pass
    else:
        raise AssertionError("the stream went on after close")
