"""Names through every backend (#17 point 3): every legal name is kept exactly, in name order,
and reachable by its exact name: get, history, search's name filter, remove and revive."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from lazy_memory.engine.search_model import SearchQuery
from lazy_memory.engine.service import MemoryService
from tests.support.actors import ALICE, IMPORTER
from tests.support.clocks import T0, TickingClock
from tests.support.name_table import LEGAL, REAL_WORLD
from tests.support.stores import OpenStorage

NAMES = sorted(set(LEGAL) | set(REAL_WORLD))


def content(name: str, description: str = "d") -> RecordContent:
    return RecordContent(name=name, type=RecordType.USER, description=description, body="b")


async def test_every_legal_name_is_kept_exactly_and_in_name_order(storage: Storage) -> None:
    for offset, name in enumerate(NAMES):
        await storage.save_record(content(name), actor=ALICE, at=T0 + timedelta(seconds=offset))

    assert [record.name for record in await storage.list_records()] == NAMES
    assert [entry.name for entry in await storage.list_index()] == NAMES
    for name in NAMES:
        assert (await storage.recall_record(name)).name == name
        assert [entry.name for entry in await storage.history(name)] == [name]


async def test_every_legal_name_is_removed_revived_and_found_by_its_exact_name(
    storage: Storage,
) -> None:
    at = iter(T0 + timedelta(seconds=second) for second in range(10_000))
    for name in NAMES:
        await storage.save_record(content(name), actor=ALICE, at=next(at))
        await storage.remove_record(name, actor=ALICE, at=next(at))
        revived = await storage.save_record(
            content(name, "back"), actor=ALICE, at=next(at), if_revision=2
        )
        assert (revived.name, revived.revision, revived.description) == (name, 3, "back")
    for name in NAMES:
        hits = await storage.search(SearchQuery(names=(name,)), 5)
        assert [hit.name for hit in hits] == [name]


async def test_the_service_saves_real_world_names_on_every_backend(storage: Storage) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))
    for name in REAL_WORLD:
        await service.save(name, type="project", description="first", body="b")
        edited = await service.save(name, description="shortened")
        assert (edited.name, edited.revision) == (name, 2)

    assert {record.name for record in await service.list_records()} == set(REAL_WORLD)


async def test_a_name_held_from_an_older_import_stays_reachable(
    backend: str, open_store: OpenStorage
) -> None:
    storage = await open_store()
    held = content("old/tab\tname")
    if backend == "remote":
        # A daemon's storage peer is held to the rule for a name the store never had.
        with pytest.raises(InvalidRecord, match="invalid name"):
            await storage.save_record(held, actor=IMPORTER, at=T0, operation=Operation.IMPORT)
        return
    await storage.save_record(held, actor=IMPORTER, at=T0, operation=Operation.IMPORT)
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))

    edited = await service.save(held.name, description="edited")
    await service.remove(held.name)
    revived = await service.save(held.name, type="user", description="back", body="")

    assert (edited.revision, revived.revision) == (2, 4)
    assert [entry.revision for entry in await service.history(held.name)] == [1, 2, 3, 4]
