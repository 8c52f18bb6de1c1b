"""Conformance of the index read and the change marker: what the launch context is built on."""

from __future__ import annotations

import asyncio
import os
import sys
from datetime import timedelta

import pytest

from lazy_memory.engine.errors import Conflict
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.clocks import T0
from tests.support.documents import REPOSITORY
from tests.support.records import compact
from tests.support.stores import OpenStorage
from tests.support.writer import WRITER

LATER = T0 + timedelta(hours=1, microseconds=250)


def content(
    name: str, description: str = "How we deploy", type: RecordType = RecordType.PROJECT
) -> RecordContent:
    return RecordContent(name=name, type=type, description=description, body=f"body of {name}")


async def test_the_index_is_the_live_records_in_name_order_without_bodies(
    storage: Storage,
) -> None:
    # Code point order, whatever the locale: upper case, digits and accents sort apart.
    names = ["zeta", "alpha", "Beta", "mid", "9-lives", "émile", "alpha.2", "alpha-1"]
    for name in names:
        await storage.save_record(content(name), actor=ALICE, at=T0)
    await storage.save_record(
        content("alpha", "Updated:\tnow  with runs   of whitespace", RecordType.FEEDBACK),
        actor=ALICE,
        at=LATER,
    )
    await storage.remove_record("mid", actor=ALICE, at=T0)

    index = await storage.list_index()

    assert [entry.name for entry in index] == sorted(set(names) - {"mid"})
    assert index[[entry.name for entry in index].index("alpha")] == IndexEntry(
        "alpha", RecordType.FEEDBACK, "Updated:\tnow  with runs   of whitespace", 2, LATER
    )
    assert all(isinstance(entry, IndexEntry) for entry in index)
    assert all(type(entry.type) is RecordType for entry in index)
    assert all(entry.updated_at.utcoffset() == timedelta(0) for entry in index)
    assert index == [
        IndexEntry(record.name, record.type, record.description, record.revision, record.updated_at)
        for record in await storage.list_records()
    ]


async def test_an_empty_store_has_an_empty_index(storage: Storage) -> None:
    assert await storage.list_index() == []


async def test_a_revived_record_is_back_in_the_index_at_its_new_revision(
    storage: Storage,
) -> None:
    await storage.save_record(content("deploy"), actor=ALICE, at=T0)
    await storage.remove_record("deploy", actor=ALICE, at=T0)
    assert await storage.list_index() == []

    await storage.save_record(content("deploy", "Back again"), actor=ALICE, at=LATER)

    assert await storage.list_index() == [
        IndexEntry("deploy", RecordType.PROJECT, "Back again", 3, LATER)
    ]


async def test_the_marker_holds_still_without_writes_and_moves_with_each_write(
    storage: Storage,
) -> None:
    markers = [await storage.change_marker()]
    assert await storage.change_marker() == markers[-1]

    async def moved() -> None:
        marker = await storage.change_marker()
        assert marker not in markers, f"the marker returned to an earlier value: {marker}"
        assert await storage.change_marker() == marker
        markers.append(marker)

    await storage.save_record(content("alpha"), actor=ALICE, at=T0)
    await moved()
    await storage.save_record(content("alpha", "Updated"), actor=ALICE, at=T0)
    await moved()
    await storage.save_record(content("beta"), actor=ALICE, at=T0, operation=Operation.IMPORT)
    await moved()
    await storage.remove_record("alpha", actor=ALICE, at=T0)
    await moved()
    await storage.put_compact(compact("first"))
    await moved()
    await storage.put_compact(compact("second"))
    await moved()
    await storage.clear_compact()
    await moved()


async def test_a_refused_write_changes_nothing_the_marker_guards(storage: Storage) -> None:
    await storage.save_record(content("alpha"), actor=ALICE, at=T0)
    index = await storage.list_index()
    marker = await storage.change_marker()

    with pytest.raises(Conflict):
        await storage.save_record(content("alpha", "late"), actor=ALICE, at=T0, if_revision=0)

    # The marker may move on a refused write, but must not stay put if the store changed.
    if await storage.change_marker() == marker:
        assert await storage.list_index() == index


async def test_the_marker_moves_when_another_handle_writes(open_store: OpenStorage) -> None:
    reader = await open_store()
    writer = await open_store()
    await writer.save_record(content("alpha"), actor=ALICE, at=T0)
    seen = {await reader.change_marker()}

    async def moved_for_the_reader() -> None:
        marker = await reader.change_marker()
        assert marker not in seen
        seen.add(marker)

    await writer.save_record(content("alpha", "Updated"), actor=ALICE, at=T0)
    await moved_for_the_reader()
    await writer.remove_record("alpha", actor=ALICE, at=T0)
    await moved_for_the_reader()
    await writer.put_compact(compact("first"))
    await moved_for_the_reader()
    await writer.clear_compact()
    await moved_for_the_reader()

    before_reopen = await reader.change_marker()
    await reader.aclose()
    await writer.save_record(content("gamma"), actor=ALICE, at=T0)
    reopened = await open_store()
    assert await reopened.change_marker() != before_reopen


async def test_the_marker_moves_when_another_process_writes(open_store: OpenStorage) -> None:
    storage = await open_store()
    await storage.save_record(content("alpha"), actor=ALICE, at=T0)
    marker = await storage.change_marker()
    index = await storage.list_index()

    # The writer opens the store the environment names, as a separate engine would.
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    writer = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WRITER),
        "elsewhere",
        "1",
        "0",
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(writer.communicate(), 120)
    assert writer.returncode == 0, stderr.decode()

    assert await storage.change_marker() != marker
    assert [entry.name for entry in await storage.list_index()] == [
        *(entry.name for entry in index),
        "elsewhere-0",
    ]
