"""The polling change feed: what it announces when another process writes to the same store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lazy_memory.adapters.polling import PollingFeed, changes_between
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.ports import Change
from lazy_memory.engine.records import Operation
from tests.support.actors import BOB
from tests.support.clocks import NOON
from tests.support.records import content


@pytest.fixture
async def two_storages(tmp_path: Path) -> AsyncIterator[tuple[SqliteStorage, SqliteStorage]]:
    """Two connections to one SQLite file, as two processes sharing a store would have."""
    first = await SqliteStorage.open(tmp_path / "memory.db")
    second = await SqliteStorage.open(tmp_path / "memory.db")
    yield first, second
    await first.aclose()
    await second.aclose()


def test_changes_between_names_saves_and_removals() -> None:
    before = {"kept": 1, "updated": 1, "removed": 4}
    after = {"kept": 1, "updated": 2, "created": 1}
    assert changes_between(before, after) == [
        Change(name="created", revision=1, operation=Operation.SAVE),
        Change(name="removed", revision=5, operation=Operation.REMOVE),
        Change(name="updated", revision=2, operation=Operation.SAVE),
    ]
    assert changes_between(after, after) == []


async def test_a_poll_announces_writes_made_through_another_connection(
    two_storages: tuple[SqliteStorage, SqliteStorage],
) -> None:
    watched, writer = two_storages
    await writer.save_record(content("old"), actor=BOB, at=NOON)
    feed = PollingFeed(watched, interval_seconds=3600)
    heard: list[Change] = []
    await feed.subscribe(heard.append)
    await feed.poll()
    assert heard == [], "what the store held at subscription is not a change"

    await writer.save_record(content("new"), actor=BOB, at=NOON)
    await writer.remove_record("old", actor=BOB, at=NOON)
    await feed.poll()
    assert heard == [
        Change(name="new", revision=1, operation=Operation.SAVE),
        Change(name="old", revision=2, operation=Operation.REMOVE),
    ]
    await feed.unsubscribe(heard.append)


async def test_polling_runs_by_itself_while_someone_listens_and_stops_after(
    two_storages: tuple[SqliteStorage, SqliteStorage],
) -> None:
    watched, writer = two_storages
    feed = PollingFeed(watched, interval_seconds=0.05)
    heard: list[Change] = []
    await feed.subscribe(heard.append)
    await writer.save_record(content("seen"), actor=BOB, at=NOON)
    for _ in range(100):
        if heard:
            break
        await asyncio.sleep(0.05)
    assert [change.name for change in heard] == ["seen"]

    await feed.unsubscribe(heard.append)
    await writer.save_record(content("unheard"), actor=BOB, at=NOON)
    await asyncio.sleep(0.3)
    assert [change.name for change in heard] == ["seen"]


async def test_own_writes_are_announced_once_without_waiting_for_a_poll(
    two_storages: tuple[SqliteStorage, SqliteStorage],
) -> None:
    storage, _ = two_storages
    feed = PollingFeed(storage, interval_seconds=3600)
    heard: list[Change] = []
    await feed.subscribe(heard.append)
    saved = await storage.save_record(content("mine"), actor=BOB, at=NOON)
    feed.announce(Change(name=saved.name, revision=saved.revision, operation=Operation.SAVE))
    removed = await storage.remove_record("mine", actor=BOB, at=NOON)
    feed.announce(Change(name="mine", revision=removed.revision, operation=Operation.REMOVE))
    await feed.poll()
    assert heard == [
        Change(name="mine", revision=1, operation=Operation.SAVE),
        Change(name="mine", revision=2, operation=Operation.REMOVE),
    ], "a poll after the announcements finds nothing new to tell"
    await feed.unsubscribe(heard.append)
