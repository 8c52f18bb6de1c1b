"""One name, however it is spelled, on every backend (#30 point 3).

Two names equal after Unicode normalisation (NFC) display alike, so they are one name: a
store keeps the spelling a record was first written by, and finds it by any other
(Storage.spellings; engine/names.py). A store written before that rule may hold two
spellings of one name: each stays usable by its exact spelling, and a third is refused as
ambiguous, naming both.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazy_memory.engine.errors import InvalidRecord, NotFound
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.service import MemoryService
from tests.support.actors import ALICE
from tests.support.clocks import T0, TickingClock

COMPOSED = "caf\u00e9 notes"
DECOMPOSED = "cafe\u0301 notes"
ANGSTROM = ("\u00c5ngstr\u00f6m", "A\u030angstr\u00f6m", "\u212bngstr\u00f6m")
"""Three spellings of one name: Å precomposed, A with a combining ring, the Angstrom sign."""


def content(name: str, description: str = "first") -> RecordContent:
    return RecordContent(name=name, type=RecordType.PROJECT, description=description, body="b")


def service_of(storage: Storage) -> MemoryService:
    return MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))


async def test_spellings_gives_the_held_spelling_of_a_name_live_or_removed(
    storage: Storage,
) -> None:
    await storage.save_record(content(DECOMPOSED), actor=ALICE, at=T0)
    # The Kelvin sign is K after NFC: an ASCII name can be another spelling of a held one.
    await storage.save_record(content("\u212aelvin"), actor=ALICE, at=T0)
    await storage.save_record(content("Ohm"), actor=ALICE, at=T0)
    await storage.remove_record("Ohm", actor=ALICE, at=T0)

    assert await storage.spellings(COMPOSED) == [DECOMPOSED]
    assert await storage.spellings(DECOMPOSED) == [DECOMPOSED]
    assert await storage.spellings("Kelvin") == ["\u212aelvin"]
    assert await storage.spellings("Ohm") == ["Ohm"]
    assert await storage.spellings("cafe notes") == []
    assert await storage.spellings("never written") == []


async def test_a_name_is_the_record_held_by_any_spelling_of_it(storage: Storage) -> None:
    service = service_of(storage)
    created = await service.save(DECOMPOSED, type="project", description="first", body="b")

    edited = await service.save(COMPOSED, description="edited")
    shown = await service.recall(COMPOSED)
    history = await service.history(COMPOSED)
    removed = await service.remove(COMPOSED)
    revived = await service.save(COMPOSED, type="user", description="back", body="again")

    # One record, which keeps the spelling it was first written by.
    assert created.name == edited.name == shown.name == removed.name == revived.name == DECOMPOSED
    assert (edited.revision, removed.revision, revived.revision) == (2, 3, 4)
    assert [entry.revision for entry in history] == [1, 2]
    assert [record.name for record in await service.list_records()] == [DECOMPOSED]
    assert {entry.name for entry in await service.history()} == {DECOMPOSED}


async def test_a_name_with_a_compatibility_singleton_is_one_record_too(storage: Storage) -> None:
    service = service_of(storage)
    await service.save("Kelvin scale", type="reference", description="d", body="b")

    again = await service.save("\u212aelvin scale", description="the Kelvin sign's spelling")

    assert (again.name, again.revision) == ("Kelvin scale", 2)
    assert [record.name for record in await service.list_records()] == ["Kelvin scale"]


async def test_two_spellings_an_older_store_holds_stay_apart_and_a_third_is_ambiguous(
    backend: str, storage: Storage
) -> None:
    first, second, third = ANGSTROM
    await storage.save_record(content(first), actor=ALICE, at=T0)
    if backend == "remote":
        # A daemon's storage peer is held to the rule: no second spelling of a held name.
        with pytest.raises(InvalidRecord, match=r"same name .* '\\xc5ngstr\\xf6m'"):
            await storage.save_record(content(second), actor=ALICE, at=T0)
        return
    await storage.save_record(content(second), actor=ALICE, at=T0 + timedelta(seconds=1))
    service = service_of(storage)

    for name in (first, second):
        assert (await service.recall(name)).name == name
        assert (await service.save(name, description=f"{name!a} edited")).revision == 2
    with pytest.raises(InvalidRecord, match=r"2 records .*A\\u030angstr.*\\xc5ngstr"):
        await service.save(third, description="which one?")
    with pytest.raises(InvalidRecord, match="give one exactly"):
        await service.recall(third)
    assert len(await service.list_records()) == 2


async def test_a_name_no_record_holds_by_any_spelling_is_not_found(storage: Storage) -> None:
    service = service_of(storage)
    await service.save(DECOMPOSED, type="project", description="d", body="b")

    with pytest.raises(NotFound):
        await service.recall("cafe notes")
    with pytest.raises(NotFound):
        await service.remove("caf\u00e8 notes")
    with pytest.raises(NotFound):
        await service.history("caf notes")


@pytest.mark.parametrize(
    "name", ["fake\uff08project\uff09: x", "fake (project)\uff1a x", "b (user)\u2236 fake"]
)
async def test_a_look_alike_type_mark_is_refused_on_every_backend(
    storage: Storage, name: str
) -> None:
    with pytest.raises(InvalidRecord, match="look-alike"):
        await service_of(storage).save(name, type="project", description="d", body="b")

    assert await storage.list_records() == []
