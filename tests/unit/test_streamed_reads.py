"""Reads that stream the index: the section assembled batch by batch, a page of the index, a
page of the section; each the same as from the whole, wherever the batches break."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.engine import context, delivery
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    Role,
    assemble,
    assembled_size,
    finished,
    launch_context,
    opened,
)
from lazy_memory.engine.delivery import page, pages
from lazy_memory.engine.index import IndexEntry, UnreadableRecord, index_page
from lazy_memory.engine.records import RecordType
from tests.support.clocks import T0
from tests.support.records import compact

RECORDS = [
    IndexEntry(f"record-{number}", RecordType.PROJECT, f"about {number}", 1, T0)
    for number in range(7)
]
COMPACT = compact(
    "- record-0 to record-6\n",
    # record-3 and record-6 were written since, at a revision the compact has not seen.
    {name: 1 for name in ("record-0", "record-1", "record-2", "record-4", "record-5")}
    | {"record-3": 0, "record-6": 0, "gone": 2},
    preamble="# Compacted",
)
CURRENT = {record.name: record.revision for record in RECORDS}
"""A watermark at which the compact covers every record: nothing is written since."""
BATCHINGS = [[RECORDS], [RECORDS[:2], [], RECORDS[2:5], RECORDS[5:]], [[r] for r in RECORDS], []]


@pytest.mark.parametrize(
    "unreadable", [[], [UnreadableRecord("broken", "its type 'x' is not one")]]
)
@pytest.mark.parametrize("batches", BATCHINGS)
@pytest.mark.parametrize(
    ("compact", "removed"),
    [(None, []), (COMPACT, ["gone"]), (COMPACT.model_copy(update={"watermark": CURRENT}), [])],
)
@pytest.mark.parametrize(
    ("role", "warn"), [(Role.AGENT, 10), (Role.BUILDER, 10), (Role.BUILDER, 10**9)]
)
def test_a_section_assembled_in_batches_is_the_section_of_the_whole(
    batches: list[list[IndexEntry]],
    compact: Compact | None,
    removed: list[str],
    role: Role,
    warn: int,
    unreadable: list[UnreadableRecord],
) -> None:
    records = [record for batch in batches for record in batch]
    whole = assemble(role, records, compact, removed, unreadable)

    section = finished(role, opened(role, batches, compact, removed), unreadable, warn)

    pointer = DOCTOR_POINTER + "\n" if role == Role.BUILDER and section.over_threshold else ""
    assert section.text == whole + pointer
    assert section.bytes == assembled_size(role, records, compact, removed, unreadable)
    assert section.over_threshold == (section.bytes > warn)


def test_launch_context_joins_its_records_a_batch_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole = launch_context(Role.AGENT, RECORDS, COMPACT, ["gone"], 10**9)
    monkeypatch.setattr(context, "_BATCH", 2)

    assert launch_context(Role.AGENT, RECORDS, COMPACT, ["gone"], 10**9) == whole


@pytest.mark.parametrize("batches", BATCHINGS[:3])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 8])
def test_a_page_of_the_index_is_its_slice_of_the_whole(
    batches: list[list[IndexEntry]], size: int
) -> None:
    pages_count = -(-len(RECORDS) // size)
    for number in range(1, pages_count + 2):
        shown, count = index_page(batches, page=number, size=size)

        assert shown == RECORDS[(number - 1) * size : number * size]
        assert count == len(RECORDS)


NEWLINES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.text(alphabet="aé🚀" + NEWLINES))
def test_the_lines_of_a_section_are_its_splitlines(text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(delivery, "_LINES_BLOCK", 3)

        assert list(delivery._lines(text)) == text.splitlines(keepends=True)


@pytest.mark.parametrize("limit", [60, 100, 10_000])
def test_a_page_of_the_section_is_that_page_of_all_pages(limit: int) -> None:
    text = launch_context(Role.AGENT, RECORDS * 3, None, [], 10**9).text + "x" * 250 + "\n"
    every = pages(text, limit, "next(page={page})")

    for number in range(1, len(every) + 2):
        shown, count = page(text, limit, "next(page={page})", number)

        assert shown == (every[number - 1] if number <= len(every) else None)
        assert count == len(every)
