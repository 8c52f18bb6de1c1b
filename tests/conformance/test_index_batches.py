"""Conformance of the index handed over in batches (ports.fold_index): the same entries as
list_index, in the same order, whichever backend, across batch boundaries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazy_memory.adapters.files import index as files_index
from lazy_memory.adapters.sqlite import index as sqlite_index
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.ports import IndexBatches, Storage, fold_index
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.clocks import T0

NAMES = ["echo", "alpha", "delta", "foxtrot", "bravo", "charlie"]


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two, so five live records cross two batch boundaries."""
    monkeypatch.setattr(sqlite_index, "INDEX_BATCH", 2)
    monkeypatch.setattr(files_index, "INDEX_BATCH", 2)


async def filled(storage: Storage) -> Storage:
    for minute, name in enumerate(NAMES):
        content = RecordContent(
            name=name, type=RecordType.PROJECT, description=f"about {name}", body="b"
        )
        await storage.save_record(content, actor=ALICE, at=T0 + timedelta(minutes=minute))
    await storage.remove_record("delta", actor=ALICE, at=T0 + timedelta(hours=1))
    return storage


def batches_of(batches: IndexBatches) -> list[list[IndexEntry]]:
    return [list(batch) for batch in batches]


async def test_the_batches_hold_the_index_in_name_order(storage: Storage, backend: str) -> None:
    await filled(storage)

    batches = await fold_index(storage, batches_of)

    assert [entry for batch in batches for entry in batch] == await storage.list_index()
    assert [entry.name for batch in batches for entry in batch] == [
        "alpha",
        "bravo",
        "charlie",
        "echo",
        "foxtrot",
    ]
    if backend in ("sqlite", "files"):  # the backends that stream: the rest hand one batch
        assert [len(batch) for batch in batches] == [2, 2, 1]


async def test_an_empty_store_folds_no_entries(storage: Storage) -> None:
    batches = await fold_index(storage, batches_of)

    assert [entry for batch in batches for entry in batch] == []
