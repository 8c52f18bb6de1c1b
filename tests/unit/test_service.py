"""MemoryService on a real SQLite store: the write gate, validation, and partial updates."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lazy_memory.adapters.sqlite import SqliteStorage
from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind, Operation
from lazy_memory.engine.service import MemoryService

BUILDER = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="builder-3"))
AGENT = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="agent"), task_id="task-9")
NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FixedClock:
    def now(self) -> datetime:
        return NOON


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    storage = await SqliteStorage.open(tmp_path / "memory.db")
    yield storage
    await storage.aclose()


async def test_saves_are_attributed_to_the_session_and_stamped_by_the_clock(
    storage: SqliteStorage,
) -> None:
    service = MemoryService(storage, BUILDER, FixedClock())

    record = await service.save("n", type="project", description="d", body="b")

    assert (record.updated_by, record.updated_at) == (BUILDER.actor, NOON)
    assert (await service.history())[0].actor == BUILDER.actor


async def test_an_agent_is_refused_every_write_and_nothing_is_written(
    storage: SqliteStorage,
) -> None:
    await MemoryService(storage, BUILDER, FixedClock()).save(
        "n", type="project", description="d", body="b"
    )
    agent = MemoryService(storage, AGENT, FixedClock())

    with pytest.raises(PermissionDenied, match="task-9"):
        await agent.save("m", type="project", description="d", body="b")
    with pytest.raises(PermissionDenied):
        await agent.save("n", body="changed")
    with pytest.raises(PermissionDenied):
        await agent.remove("n")

    assert (await agent.recall("n")).body == "b"
    assert len(await agent.history()) == 1


async def test_authoring_rules_apply_and_nothing_is_written(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER, FixedClock())

    with pytest.raises(InvalidRecord):
        await service.save("n", type="project", description="x" * 201, body="b")
    with pytest.raises(InvalidRecord):
        await service.save("N", type="project", description="d", body="b")

    assert await service.history() == []


async def test_an_update_keeps_the_fields_it_does_not_give(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER, FixedClock())
    await service.save("n", type="project", description="d", body="b")

    updated = await service.save("n", description="new")

    assert (updated.type, updated.description, updated.body) == ("project", "new", "b")
    with pytest.raises(InvalidRecord, match="new record"):
        await service.save("fresh", body="only a body")


async def test_a_partial_update_is_a_compare_and_swap_on_what_it_read(
    storage: SqliteStorage,
) -> None:
    service = MemoryService(storage, BUILDER, FixedClock())
    await service.save("n", type="project", description="d", body="b")

    with pytest.raises(Conflict):
        await service.save("n", body="late", if_revision=0)
    saved = await service.save("n", body="on time", if_revision=1)

    assert saved.revision == 2


async def test_history_of_a_name_never_written_is_not_found(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER, FixedClock())
    with pytest.raises(NotFound):
        await service.history("ghost")
    await service.save("ghost", type="user", description="d", body="")
    await service.remove("ghost")
    assert [e.operation for e in await service.history("ghost")] == [
        Operation.SAVE,
        Operation.REMOVE,
    ]
