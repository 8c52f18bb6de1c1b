"""Moving a store between real SQLite and files stores: resumable, idempotent, never merging."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from lazy_memory.adapters.files.storage import FileStorage
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import Conflict, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.moving import CompactMove, MoveReport, move_store
from lazy_memory.engine.names import derived_name
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from lazy_memory.engine.service import MemoryService
from tests.support.actors import ALICE
from tests.support.clocks import T0, FixedClock
from tests.support.records import compact

COMPACT = compact("- a: first", {"a": 2})


@pytest.fixture
async def source(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    storage = await SqliteStorage.open(tmp_path / "source" / "memory.db")
    yield storage
    await storage.aclose()


@pytest.fixture
async def target(tmp_path: Path) -> AsyncIterator[FileStorage]:
    storage = await FileStorage.open(tmp_path / "target")
    yield storage
    await storage.aclose()


async def save(storage: Storage, name: str, body: str, step: int) -> None:
    content = RecordContent(name=name, type=RecordType.PROJECT, description=name, body=body)
    await storage.save_record(content, actor=ALICE, at=T0 + timedelta(seconds=step))


async def test_a_move_copies_everything_and_a_rerun_is_a_no_op(
    source: SqliteStorage, target: FileStorage
) -> None:
    await save(source, "a", "v1", 1)
    await save(source, "a", "v2", 2)
    await save(source, "b", "v1", 3)
    await source.remove_record("b", actor=ALICE, at=T0)
    await source.put_compact(COMPACT)

    first = await move_store(source, target)
    again = await move_store(source, target)

    assert first == MoveReport(
        entries=4, already_present=0, copied=4, compact=CompactMove.COPIED, dry_run=False
    )
    assert again == MoveReport(
        entries=4, already_present=4, copied=0, compact=CompactMove.UNCHANGED, dry_run=False
    )
    assert await target.history() == await source.history()
    assert await target.list_records() == await source.list_records()
    assert await target.get_compact() == COMPACT


async def test_a_target_holding_the_start_of_the_history_is_continued(
    source: SqliteStorage, target: FileStorage
) -> None:
    await save(source, "a", "v1", 1)
    await move_store(source, target)
    await save(source, "a", "v2", 2)
    await source.remove_record("a", actor=ALICE, at=T0)
    progress: list[tuple[int, int]] = []

    report = await move_store(source, target, progress=lambda *step: progress.append(step))

    assert (report.already_present, report.copied) == (1, 2)
    assert progress == [(1, 2), (2, 2)]
    assert [(e.revision, e.operation) for e in await target.history()] == [
        (1, Operation.SAVE),
        (2, Operation.SAVE),
        (3, Operation.REMOVE),
    ]


@pytest.mark.parametrize("extra", ["diverging", "longer"])
async def test_a_target_with_another_history_is_refused_and_left_untouched(
    source: SqliteStorage, target: FileStorage, extra: str
) -> None:
    await save(source, "a", "v1", 1)
    await move_store(source, target)
    await save(target, "a", "written in the target", 5)
    if extra == "diverging":
        await save(source, "a", "written in the source", 6)
    await target.put_compact(COMPACT)
    before = await target.history()

    with pytest.raises(Conflict, match=r"the target already holds a .*nothing was written"):
        await move_store(source, target)

    assert await target.history() == before
    assert await target.get_compact() == COMPACT


async def test_a_dry_run_writes_nothing(source: SqliteStorage, target: FileStorage) -> None:
    await save(source, "a", "v1", 1)
    await target.put_compact(COMPACT)

    report = await move_store(source, target, dry_run=True)

    assert report == MoveReport(
        entries=1, already_present=0, copied=1, compact=CompactMove.CLEARED, dry_run=True
    )
    assert await target.history() == []
    assert await target.get_compact() == COMPACT


async def test_the_source_having_no_compact_clears_the_targets(
    source: SqliteStorage, target: FileStorage
) -> None:
    await target.put_compact(COMPACT)

    assert (await move_store(source, target)).compact is CompactMove.CLEARED
    assert await target.get_compact() is None


async def test_an_agent_may_not_move_a_store(source: SqliteStorage, target: FileStorage) -> None:
    await save(source, "a", "v1", 1)
    agent = Identity(actor=ALICE, task_id="task-1")

    with pytest.raises(PermissionDenied):
        await MemoryService(source, agent, FixedClock()).move_to(target)

    assert await target.history() == []


async def test_a_second_spelling_of_a_name_enters_the_target_under_a_derived_name(
    source: SqliteStorage, target: FileStorage
) -> None:
    # An older store took both spellings of one name (equal after NFC) as two records; the
    # target holds one record per name, so the one written second is renamed, reported.
    await save(source, "caf\u00e9", "composed", 1)
    await save(source, "cafe\u0301", "decomposed", 2)
    await save(source, "caf\u00e9", "composed again", 3)

    report = await move_store(source, target)
    again = await move_store(source, target)

    renamed = derived_name("cafe\u0301")
    assert report.renamed == {"cafe\u0301": renamed}
    assert again.copied == 0
    assert {record.name for record in await target.list_records()} == {"caf\u00e9", renamed}
    moved = await target.recall_record(renamed)
    assert moved.body == "decomposed"
    assert moved.provenance is not None
    assert moved.provenance.original_name == "cafe\u0301"
    assert (await target.recall_record("caf\u00e9")).revision == 2
