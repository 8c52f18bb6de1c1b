"""MemoryService on a real SQLite store: the write gate, validation, partial updates, and the
context cache that another process's write must invalidate."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.context import DOCTOR_POINTER, PREAMBLES, Role
from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import Actor, ActorKind, Operation
from lazy_memory.engine.service import MemoryService
from tests.support.actors import BUILDER_SESSION
from tests.support.clocks import NOON, FixedClock

AGENT = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="agent"), task_id="task-9")


async def test_saves_are_attributed_to_the_session_and_stamped_by_the_clock(
    storage: SqliteStorage,
) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))

    record = await service.save("n", type="project", description="d", body="b")

    assert (record.updated_by, record.updated_at) == (BUILDER_SESSION.actor, NOON)
    assert (await service.history())[0].actor == BUILDER_SESSION.actor


async def test_an_agent_is_refused_every_write_and_nothing_is_written(
    storage: SqliteStorage,
) -> None:
    await MemoryService(storage, BUILDER_SESSION, FixedClock(NOON)).save(
        "n", type="project", description="d", body="b"
    )
    agent = MemoryService(storage, AGENT, FixedClock(NOON))

    with pytest.raises(PermissionDenied, match="task-9"):
        await agent.save("m", type="project", description="d", body="b")
    with pytest.raises(PermissionDenied):
        await agent.save("n", body="changed")
    with pytest.raises(PermissionDenied):
        await agent.remove("n")

    assert (await agent.recall("n")).body == "b"
    assert len(await agent.history()) == 1


async def test_authoring_rules_apply_and_nothing_is_written(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))

    with pytest.raises(InvalidRecord):
        await service.save("n", type="project", description="x" * 201, body="b")
    with pytest.raises(InvalidRecord):
        await service.save("a/b", type="project", description="d", body="b")

    assert await service.history() == []


async def test_an_update_keeps_the_fields_it_does_not_give(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))
    await service.save("n", type="project", description="d", body="b")

    updated = await service.save("n", description="new")

    assert (updated.type, updated.description, updated.body) == ("project", "new", "b")
    with pytest.raises(InvalidRecord, match="new record"):
        await service.save("fresh", body="only a body")


async def test_a_partial_update_is_a_compare_and_swap_on_what_it_read(
    storage: SqliteStorage,
) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))
    await service.save("n", type="project", description="d", body="b")

    with pytest.raises(Conflict):
        await service.save("n", body="late", if_revision=0)
    saved = await service.save("n", body="on time", if_revision=1)

    assert saved.revision == 2


async def test_history_of_a_name_never_written_is_not_found(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))
    with pytest.raises(NotFound):
        await service.history("ghost")
    await service.save("ghost", type="user", description="d", body="")
    await service.remove("ghost")
    assert [e.operation for e in await service.history("ghost")] == [
        Operation.SAVE,
        Operation.REMOVE,
    ]


# The launch context is cached between calls, keyed by the store's change marker: every
# write, by this process or another, must show in the very next context.

ELSEWHERE = """
import asyncio, sys
from datetime import UTC, datetime
from pathlib import Path
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType

async def main(path, action, name):
    storage = await SqliteStorage.open(Path(path))
    actor = Actor(kind=ActorKind.HUMAN, detail="elsewhere")
    now = datetime.now(UTC)
    if action == "save":
        content = RecordContent(
            name=name, type=RecordType.USER, description=f"saved elsewhere as {name}", body="b"
        )
        await storage.save_record(content, actor=actor, at=now)
    elif action == "rm":
        await storage.remove_record(name, actor=actor, at=now)
    elif action == "compact":
        await storage.put_compact(Compact(
            preamble="# Compacted elsewhere", summary=f"- {name}: summarized elsewhere",
            generator="mechanical", generated_at=now, generated_by=actor,
            watermark=await storage.live_revisions(),
        ))
    else:
        await storage.clear_compact()
    await storage.aclose()

asyncio.run(main(*sys.argv[1:]))
"""


async def elsewhere(path: Path, action: str, name: str = "") -> None:
    """Write to the store at path from another process, as another engine would."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        ELSEWHERE,
        str(path),
        action,
        name,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()


class CountingStorage:
    """A storage that counts index reads, to see whether the context was assembled again."""

    def __init__(self, inner: SqliteStorage) -> None:
        self.inner = inner
        self.index_reads = 0

    async def list_index(self) -> list[IndexEntry]:
        self.index_reads += 1
        return await self.inner.list_index()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_the_context_is_assembled_again_only_after_a_write(storage: SqliteStorage) -> None:
    counting = CountingStorage(storage)
    service = MemoryService(counting, BUILDER_SESSION, FixedClock(NOON))  # type: ignore[arg-type]
    await service.save("first", type="project", description="the first", body="b")

    first = await service.launch_context(Role.AGENT)
    again = await service.launch_context(Role.BUILDER)
    assert counting.index_reads == 1
    assert again.text.removeprefix(PREAMBLES[Role.BUILDER]) == first.text.removeprefix(
        PREAMBLES[Role.AGENT]
    )
    assert again.role is Role.BUILDER

    await service.save("second", type="project", description="the second", body="b")
    after = await service.launch_context(Role.AGENT)
    assert counting.index_reads == 2
    assert "- second (project): the second" in after.text


async def test_the_context_shows_at_once_what_another_process_wrote(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    storage = await SqliteStorage.open(path)
    try:
        service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))
        await service.save("mine", type="project", description="saved here", body="b")
        assert (await service.launch_context(Role.AGENT)).text.count("\n- ") == 1

        await elsewhere(path, "save", "theirs")
        context = await service.launch_context(Role.AGENT)
        assert "- theirs (user): saved elsewhere as theirs" in context.text

        await elsewhere(path, "rm", "mine")
        context = await service.launch_context(Role.AGENT)
        assert "- mine (project)" not in context.text
        assert "- theirs (user)" in context.text

        await elsewhere(path, "compact", "theirs")
        context = await service.launch_context(Role.AGENT)
        assert context.compacted
        assert "- theirs: summarized elsewhere" in context.text

        await elsewhere(path, "clear")
        context = await service.launch_context(Role.AGENT)
        assert not context.compacted
        assert "- theirs (user): saved elsewhere as theirs" in context.text
    finally:
        await storage.aclose()


async def test_an_unreadable_store_is_never_served_from_the_cache(tmp_path: Path) -> None:
    storage = await SqliteStorage.open(tmp_path / "memory.db")
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON))
    await service.save("n", type="project", description="d", body="b")
    assert (await service.launch_context(Role.AGENT)).available

    await storage.aclose()

    context = await service.launch_context(Role.AGENT)
    assert not context.available
    assert context.text.startswith("MEMORY INDEX UNAVAILABLE")


async def test_each_role_gets_its_own_framing_from_the_cached_context(
    storage: SqliteStorage,
) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON), warn_bytes=10)
    await service.save("n", type="project", description="d", body="b")

    agent = await service.launch_context(Role.AGENT)
    builder = await service.launch_context(Role.BUILDER)
    agent_again = await service.launch_context(Role.AGENT)

    assert builder.text.startswith(PREAMBLES[Role.BUILDER])
    assert agent.text.startswith(PREAMBLES[Role.AGENT])
    builder_index = builder.text.removeprefix(PREAMBLES[Role.BUILDER])
    assert builder_index == agent.text.removeprefix(PREAMBLES[Role.AGENT]) + DOCTOR_POINTER + "\n"
    assert agent_again == agent
    assert agent.bytes == len(agent.text.encode())
    assert builder.bytes == len(builder.text.removesuffix(DOCTOR_POINTER + "\n").encode())
