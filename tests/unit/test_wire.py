"""The wire (wire/): one code per engine error, one shape per index entry, every name once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import TypeAdapter

from lazy_memory.engine import errors
from lazy_memory.engine.context import LaunchContext
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import RecordType
from lazy_memory.rpc.jsonrpc.methods import METHODS
from lazy_memory.rpc.jsonrpc.storage_methods import STORAGE_METHODS
from lazy_memory.wire import index, names
from lazy_memory.wire.errors import SERVER_ERROR, error_for_code
from lazy_memory.wire.memory import ContextPage, RecallResult


def test_every_engine_error_has_its_own_code_and_comes_back_as_itself() -> None:
    assert set(errors.LISTED) == set(errors.LazyMemoryError.__subclasses__())
    codes = [error_type.code for error_type in errors.LISTED]
    assert len(set(codes)) == len(codes)
    for error_type in errors.LISTED:
        again = error_for_code(error_type.code, "why")
        assert type(again) is error_type
        assert again.message == "why"
    assert error_for_code(-32603, "internal") is None


def test_an_error_without_a_code_of_its_own_has_its_nearest_class_s() -> None:
    class Narrower(errors.NotFound):
        pass

    assert (Narrower("gone").code, Narrower("gone").exit_status) == (-32010, 3)
    assert errors.LazyMemoryError("base").code == SERVER_ERROR


@pytest.mark.parametrize(
    "at",
    [
        datetime(2026, 11, 30, 8, tzinfo=UTC),
        datetime(2026, 11, 30, 8, 0, 0, 7, tzinfo=UTC),
        datetime(2026, 11, 30, 8, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_an_index_entry_has_one_shape_in_recall_and_in_the_storage_index(at: datetime) -> None:
    entries = [IndexEntry("deploy", RecordType.PROJECT, "How we deploy", 3, at)]
    recalled = RecallResult(
        records=[index.IndexEntry.model_validate(entry, from_attributes=True) for entry in entries]
    ).model_dump(mode="json")["records"]

    assert index.index_json(entries) == recalled
    assert TypeAdapter(list[index.IndexEntry]).validate_python(recalled)
    assert index.index_entries(recalled) == entries


def test_every_method_in_the_tables_is_named_in_the_wire() -> None:
    named = {
        value for key, value in vars(names).items() if key.isupper() and isinstance(value, str)
    }

    assert set(METHODS) <= named
    assert set(STORAGE_METHODS) <= named
    assert all(name.startswith(names.STORAGE_PREFIX) for name in STORAGE_METHODS)
    assert set(STORAGE_METHODS) >= names.STORAGE_WRITES
    assert set(METHODS) | set(STORAGE_METHODS) >= names.RECORD_WRITES


def test_a_context_page_carries_the_launch_context_s_first_fields_and_its_page() -> None:
    fields = list(ContextPage.model_fields)

    assert fields == [*LaunchContext._fields[:8], "page", "pages"]
