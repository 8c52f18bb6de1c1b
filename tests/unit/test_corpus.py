"""The realistic store generator shared by tests and bench/: deterministic, valid, believable."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from bench.corpus import CORPUS_ACTOR, TYPE_SHARES, fill_store, realistic_records
from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.names import check_name
from lazy_memory.engine.records import RecordContent, RecordType, check_description

SIZES = (1, 10, 60, 500, 10_000)


@cache
def generated(count: int, seed: int = 0) -> tuple[RecordContent, ...]:
    """Each store is generated once per test session: the 10,000-record one is reused."""
    return tuple(realistic_records(count, seed))


def test_the_same_seed_gives_the_same_records() -> None:
    assert realistic_records(500, seed=7) == realistic_records(500, seed=7)


def test_a_different_seed_gives_different_records() -> None:
    first, second = realistic_records(500, seed=7), realistic_records(500, seed=8)

    assert [record.name for record in first] != [record.name for record in second]


@pytest.mark.parametrize("count", SIZES)
def test_the_count_is_honoured(count: int) -> None:
    assert len(generated(count)) == count


@pytest.mark.parametrize("count", SIZES)
def test_names_are_unique_and_valid_for_a_new_save(count: int) -> None:
    names = [record.name for record in generated(count)]

    assert len(set(names)) == count
    assert all(check_name(name) for name in names)


@pytest.mark.parametrize("count", SIZES)
def test_descriptions_are_one_line_of_40_to_190_characters(count: int) -> None:
    descriptions = [record.description for record in generated(count)]

    assert all(check_description(description) for description in descriptions)
    assert all(40 <= len(description) <= 190 for description in descriptions)


@pytest.mark.parametrize("count", SIZES)
def test_bodies_are_short_markdown_of_two_to_eight_lines(count: int) -> None:
    line_counts = {len(record.body.splitlines()) for record in generated(count)}

    assert min(line_counts) >= 2
    assert max(line_counts) <= 8


@pytest.mark.parametrize(("count", "seed"), [(60, 0), (60, 1), (61, 2), (137, 3), (500, 4)])
def test_every_type_is_present_from_60_records(count: int, seed: int) -> None:
    assert {record.type for record in realistic_records(count, seed)} == set(RecordType)


def test_types_come_in_the_designed_proportions() -> None:
    counts = Counter(record.type for record in generated(5_000))

    for record_type, share in TYPE_SHARES.items():
        assert counts[record_type] / 5_000 == pytest.approx(share, abs=0.02)


async def test_fill_store_round_trips_through_sqlite(tmp_path: Path) -> None:
    storage = await open_storage(Settings(root=tmp_path, data_dir=tmp_path / "data"))
    try:
        saved = await fill_store(storage, 200, seed=3)
        listed = await storage.list_records()
    finally:
        await storage.aclose()

    assert listed == sorted(saved, key=lambda record: record.name)
    # RecordContent ignores the bookkeeping fields, so this compares what was written.
    written = [RecordContent.model_validate(record.model_dump()) for record in saved]
    assert written == realistic_records(200, seed=3)
    assert {record.updated_by for record in saved} == {CORPUS_ACTOR}
    assert {record.revision for record in saved} == {1}
    assert len({record.updated_at for record in saved}) == 200
