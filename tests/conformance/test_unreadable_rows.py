"""A row a backend cannot read (issue 30, point 2), on every backend.

Written behind the store's back (tests/support/unreadable_rows.py): a type that is not one of the
four, a revision of 0, a time that is not one, text that is not UTF-8. Such a record is a
typed error, StorageUnavailable (UnreadableRecords), naming it and why, never an untyped
one; every read of many records reads the others and names it; the launch section lists the
others and names it in one line; the index recall lists the others beside it; doctor lists
it with why; a save giving every field replaces it.
"""

from __future__ import annotations

import json

import pytest

from lazy_memory.adapters import BACKENDS
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import UNAVAILABLE, Role
from lazy_memory.engine.doctor import Remedy
from lazy_memory.engine.errors import StorageUnavailable, UnreadableRecords
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.engine.ports import Storage, fold_index
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.saving import SaveOutcome
from lazy_memory.engine.search_parser import parse_query
from lazy_memory.engine.service import MemoryService
from lazy_memory.wire.index import encoded_index
from tests.support.actors import ALICE
from tests.support.clocks import T0, TickingClock
from tests.support.unreadable_rows import POSTGRES_DAMAGES, REASONS, damage

NAMES = ["alpha", "broken", "zeta"]
READABLE = ["alpha", "zeta"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each backend with each damage it can hold (a PostgreSQL UTF8 database holds neither
    a time that is not one nor text that is not UTF-8: tests/e2e/test_postgres_encodings.py
    writes the latter in a SQL_ASCII one)."""
    kinds = getattr(metafunc.function, "kinds", tuple(REASONS))
    combinations = [
        (backend, kind)
        for backend in BACKENDS
        for kind in kinds
        if backend != "postgres" or kind in POSTGRES_DAMAGES
    ]
    metafunc.parametrize("combination", combinations, ids="-".join)


@pytest.fixture
def backend(combination: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend under test (conftest.py's, for the combinations here)."""
    monkeypatch.setenv("LAZY_STORAGE", combination[0])
    return combination[0]


@pytest.fixture
def kind(combination: tuple[str, str]) -> str:
    """The damage done to the record broken."""
    return combination[1]


@pytest.fixture
async def damaged(storage: Storage, settings: Settings, kind: str) -> UnreadableRecord:
    """alpha, broken and zeta saved, each holding the word "shared"; broken then damaged."""
    for name in NAMES:
        content = RecordContent(
            name=name, type=RecordType.PROJECT, description=f"{name} note", body="shared words"
        )
        await storage.save_record(content, actor=ALICE, at=T0)
    await damage(settings, "broken", kind)
    return UnreadableRecord("broken", REASONS[kind])


def names(items: object) -> list[str]:
    assert isinstance(items, list)
    return [item.name for item in items]


async def test_reading_it_is_a_typed_error_naming_it_and_why(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    with pytest.raises(UnreadableRecords) as raised:
        await storage.recall_record("broken")

    assert isinstance(raised.value, StorageUnavailable)
    assert raised.value.records == [damaged]
    assert f"'broken' ({damaged.reason})" in raised.value.message
    assert (await storage.recall_record("alpha")).name == "alpha"


async def test_every_read_of_many_records_reads_the_others_and_names_it(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    reads = {
        "list_index": storage.list_index(),
        "list_records": storage.list_records(),
        "fold_index": fold_index(storage, lambda batches: [e for b in batches for e in b]),
        "search": storage.search(parse_query("shared"), 20),
    }
    for read_name, read in reads.items():
        with pytest.raises(UnreadableRecords) as raised:
            await read
        assert raised.value.records == [damaged], read_name
        assert sorted(names(raised.value.readable)) == READABLE, read_name
    assert await storage.unreadable_records() == [damaged]


async def test_the_launch_section_lists_the_others_and_names_it_in_one_line(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))

    section = (await service.launch_context(Role.BUILDER)).text
    delivered = (await service.launch_context(Role.AGENT, 10_000)).text

    for text in (section, delivered):
        assert "- alpha (project): alpha note\n- zeta (project): zeta note\n" in text
        assert "(1 memory record could not be read: 'broken'; `lazy doctor` says why)\n" in text
        assert UNAVAILABLE.split("(")[0] not in text
        assert "No memory records" not in text


async def test_a_fitted_section_names_it_too(storage: Storage, damaged: UnreadableRecord) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))
    whole = (await service.launch_context(Role.BUILDER, None)).text

    fitted = await service.launch_context(Role.BUILDER, len(whole) - 1)

    assert fitted.fitted
    assert "(1 memory record could not be read: 'broken'" in fitted.text


async def test_the_index_recall_lists_the_others_beside_it(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))

    read = await service.readable_index(encoded_index)

    assert isinstance(read, tuple), "one unreadable record must not blind the index"
    encoded, unreadable = read
    assert [entry["name"] for entry in json.loads(encoded.buffer)] == READABLE
    assert unreadable == [damaged]


async def test_doctor_lists_it_with_why_and_compacting_refuses(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))

    diagnosis = await service.doctor()

    assert diagnosis.remedy is Remedy.REPAIR
    assert [(row.name, row.reason) for row in diagnosis.unreadable] == [damaged]
    assert diagnosis.record_count == len(READABLE)
    with pytest.raises(UnreadableRecords):
        await service.compact(Mode.MECHANICAL)


async def test_a_save_giving_every_field_replaces_it(
    storage: Storage, damaged: UnreadableRecord
) -> None:
    service = MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))

    saved = await service.save("broken", type="user", description="mended", body="new")

    assert (await storage.recall_record("broken")).description == "mended"
    assert (saved.revision >= 2, saved.outcome) == (True, SaveOutcome.REPLACED)
    assert names(await storage.list_index()) == NAMES
    assert await storage.unreadable_records() == []


# A revision that does not read leaves no next revision to take: such a row is repaired where
# it is stored (doctor says so).
test_a_save_giving_every_field_replaces_it.kinds = ("type", "time", "text")  # type: ignore[attr-defined]
