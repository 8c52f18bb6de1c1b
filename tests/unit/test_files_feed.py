"""The files backend as a change feed: its own writes at once, other processes' within a poll."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lazy_memory.adapters.files.storage import FileStorage
from lazy_memory.engine.ports import Change, ChangeFeed
from lazy_memory.engine.records import Operation
from tests.support.actors import BOB
from tests.support.clocks import NOON
from tests.support.records import content


@pytest.fixture
async def two_handles(tmp_path: Path) -> AsyncIterator[tuple[FileStorage, FileStorage]]:
    """Two handles on one store, as two processes sharing it would have."""
    watched = await FileStorage.open(tmp_path, poll_seconds=0.05)
    writer = await FileStorage.open(tmp_path)
    yield watched, writer
    await watched.aclose()
    await writer.aclose()


async def heard_within(heard: list[Change], count: int) -> list[Change]:
    for _ in range(100):
        if len(heard) >= count:
            break
        await asyncio.sleep(0.02)
    return heard


async def test_its_own_writes_are_announced_as_they_commit(
    two_handles: tuple[FileStorage, FileStorage],
) -> None:
    watched, _ = two_handles
    assert isinstance(watched, ChangeFeed)
    await watched.save_record(content("before"), actor=BOB, at=NOON)
    heard: list[Change] = []
    await watched.subscribe(heard.append)

    await watched.save_record(content("alpha"), actor=BOB, at=NOON)
    await watched.save_record(content("beta"), actor=BOB, at=NOON, operation=Operation.IMPORT)
    await watched.remove_record("alpha", actor=BOB, at=NOON)

    assert heard == [
        Change(name="alpha", revision=1, operation=Operation.SAVE),
        Change(name="beta", revision=1, operation=Operation.IMPORT),
        Change(name="alpha", revision=2, operation=Operation.REMOVE),
    ]
    await watched.unsubscribe(heard.append)


async def test_another_handles_writes_are_heard_while_someone_listens(
    two_handles: tuple[FileStorage, FileStorage],
) -> None:
    watched, writer = two_handles
    await writer.save_record(content("old"), actor=BOB, at=NOON)
    heard: list[Change] = []
    await watched.subscribe(heard.append)

    await writer.save_record(content("new"), actor=BOB, at=NOON)
    await writer.remove_record("old", actor=BOB, at=NOON)

    assert await heard_within(heard, 2) == [
        Change(name="new", revision=1, operation=Operation.SAVE),
        Change(name="old", revision=2, operation=Operation.REMOVE),
    ]
    await watched.unsubscribe(heard.append)
    await writer.save_record(content("unheard"), actor=BOB, at=NOON)
    await asyncio.sleep(0.2)
    assert [change.name for change in heard] == ["new", "old"]
