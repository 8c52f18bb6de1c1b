"""A partial update raced by another writer: it merges into what that writer wrote.

A save that leaves fields out reads the record, fills them in from it and writes as a
compare-and-swap on the revision it read (engine/saving.py). Here a second service, on the
same SQLite file, saves between that read and that write: the first save's clock, asked the
time of its write, lets the rival's save land first. The swap then fails, and the first save
reads the record again and merges into the rival's revision, so neither change is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import Conflict
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.saving import SaveOutcome
from lazy_memory.engine.service import MemoryService

BUILDER = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="builder-3"))
RIVAL = Identity(actor=Actor(kind=ActorKind.HUMAN, detail="alice"))
NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FixedClock:
    def now(self) -> datetime:
        return NOON


class RivalFirst:
    """A clock that, asked the time of the first write, lets a rival's write land first."""

    def __init__(self, rival: Callable[[], Coroutine[Any, Any, object]]) -> None:
        self._rival: Callable[[], Coroutine[Any, Any, object]] | None = rival

    def now(self) -> datetime:
        rival, self._rival = self._rival, None
        if rival is not None:
            # Its own thread and event loop: this one is inside the first save.
            with ThreadPoolExecutor(max_workers=1) as thread:
                thread.submit(asyncio.run, rival()).result()
        return NOON


def rival_save(path: Path, body: str) -> Callable[[], Coroutine[Any, Any, object]]:
    """A save of deploy's body by another service on the store at path, on a handle of its
    own."""

    async def save() -> object:
        storage = await SqliteStorage.open(path)
        try:
            return await MemoryService(storage, RIVAL, FixedClock()).save("deploy", body=body)
        finally:
            await storage.aclose()

    return save


@pytest.fixture
async def raced(tmp_path: Path) -> AsyncIterator[MemoryService]:
    """A service on a store holding deploy, whose first write a rival's save of deploy's body
    lands before."""
    path = tmp_path / "memory.db"
    storage = await SqliteStorage.open(path)
    try:
        await MemoryService(storage, BUILDER, FixedClock()).save(
            "deploy", type="project", description="How we deploy", body="Run make."
        )
        yield MemoryService(storage, BUILDER, RivalFirst(rival_save(path, "Run make deploy.")))
    finally:
        await storage.aclose()


async def test_a_raced_partial_update_merges_into_the_rivals_revision(
    raced: MemoryService,
) -> None:
    saved = await raced.save("deploy", description="How we deploy to staging")
    history = await raced.history("deploy")
    record = await raced.recall("deploy")

    assert (saved.revision, saved.outcome) == (3, SaveOutcome.UPDATED)
    assert (record.revision, record.description, record.body) == (
        3,
        "How we deploy to staging",
        "Run make deploy.",
    )
    assert [(entry.revision, entry.actor) for entry in history] == [
        (1, BUILDER.actor),
        (2, RIVAL.actor),
        (3, BUILDER.actor),
    ]
    assert history[1].description == "How we deploy", "the rival kept the description it read"


async def test_a_raced_partial_update_with_if_revision_is_refused(raced: MemoryService) -> None:
    with pytest.raises(Conflict, match="at revision 2, not 1"):
        await raced.save("deploy", description="How we deploy to staging", if_revision=1)
    record = await raced.recall("deploy")

    assert (record.revision, record.description, record.body) == (
        2,
        "How we deploy",
        "Run make deploy.",
    )
