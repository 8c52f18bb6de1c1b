"""The storage contract (wire/storage_contract.py): one row per Storage method, whose params
are the method's parameters, and the stores made from it forward every method."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Protocol

import pytest

from lazy_memory.adapters.reopening import reopening_store
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.search_parser import parse_query
from lazy_memory.wire.storage_contract import STORAGE_CONTRACT, StorageMethod
from tests.unit.store_reading import ALICE, T0, compact, content

NOT_FORWARDED = {"aclose"}
"""What each store made from the contract does its own way: closing what it holds."""


def rowless(port: type) -> set[str]:
    """The methods of port (and of the ports it extends) that no row of the contract is for."""
    methods = {
        name
        for klass in port.__mro__
        if Storage in klass.__mro__
        for name, value in vars(klass).items()
        if inspect.isfunction(value) and not name.startswith("_")
    }
    return methods - NOT_FORWARDED - {row.name for row in STORAGE_CONTRACT}


def test_every_storage_method_has_a_row_in_the_port_s_order() -> None:
    port_order = [name for name in vars(Storage) if name in {r.name for r in STORAGE_CONTRACT}]

    assert rowless(Storage) == set()
    assert [row.name for row in STORAGE_CONTRACT] == port_order


def test_a_storage_method_without_a_row_is_named() -> None:
    class Wider(Storage, Protocol):
        async def forget_record(self, name: str) -> None: ...

    assert rowless(Wider) == {"forget_record"}


@pytest.mark.parametrize("row", STORAGE_CONTRACT, ids=lambda row: row.name)
def test_a_row_s_params_are_its_method_s_parameters_with_their_defaults(
    row: StorageMethod[Any, Any],
) -> None:
    method = inspect.signature(getattr(Storage, row.name))
    parameters = [p for p in method.parameters.values() if p.name != "self"]
    fields = row.params.model_fields

    assert list(fields) == [parameter.name for parameter in parameters]
    for parameter in parameters:
        field = fields[parameter.name]
        if parameter.default is inspect.Parameter.empty:
            assert field.is_required(), parameter.name
        else:
            assert field.default == parameter.default, parameter.name


async def test_the_reopening_store_forwards_every_method_to_the_store_it_opens(
    tmp_path: Path,
) -> None:
    store = await SqliteStorage.open(tmp_path / "memory.db")
    failures = [StorageUnavailable("the disk is not mounted yet")]

    async def opener() -> Storage:
        if failures:
            raise failures.pop()
        return store

    reopening = reopening_store(opener, StorageUnavailable("the disk is not mounted"))
    with pytest.raises(StorageUnavailable, match="not mounted yet"):
        await reopening.list_records()
    await reopening.save_record(content("alpha"), actor=ALICE, at=T0)
    await reopening.put_compact(compact())
    assert await store.get_compact() == compact()
    reads = {
        "list_records": (),
        "list_index": (),
        "change_marker": (),
        "recall_record": ("alpha",),
        "history": ("alpha",),
        "spellings": ("alpha",),
        "unreadable_records": (),
        "live_revisions": (),
        "removed_since": ({"alpha": 1},),
        "search": (parse_query("alpha"), 5),
        "get_compact": (),
    }
    for name, arguments in reads.items():
        assert await getattr(reopening, name)(*arguments) == await getattr(store, name)(*arguments)
    await reopening.clear_compact()
    await reopening.remove_record("alpha", actor=ALICE, at=T0)

    assert await store.get_compact() is None
    assert await store.removed_since({"alpha": 1}) == ["alpha"]
    writes = {"save_record", "put_compact", "clear_compact", "remove_record"}
    assert {*writes, *reads} == {row.name for row in STORAGE_CONTRACT}
    await reopening.aclose()
