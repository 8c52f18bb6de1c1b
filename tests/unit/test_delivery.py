"""What a channel carries of a launch context: whole, fitted to a hook's limit, or in pages;
and a fitted one's last line, which names the one call or the pages that read the rest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.corpus import realistic_records
from lazy_memory.engine.constants import TOOL_RESULT_LIMIT_CHARS
from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    PREAMBLES,
    Role,
    harness_length,
    launch_context,
    unavailable_context,
)
from lazy_memory.engine.delivery import (
    RECALL_PAGE,
    fit,
    page_count,
    pages,
    priority_order,
)
from lazy_memory.engine.index import IndexEntry, index_line
from lazy_memory.engine.records import RecordType

START = datetime(2026, 1, 1, tzinfo=UTC)
TYPES = list(RecordType)
HOOK_LIMIT = 10_000


def entries(
    count: int, description: str = "how the staging deploy works, step by step"
) -> list[IndexEntry]:
    """count records of every type in turn, each written a minute after the one before."""
    return [
        IndexEntry(
            f"record-{number:04d}",
            TYPES[number % len(TYPES)],
            f"{description} ({number})",
            1,
            START + timedelta(minutes=number),
        )
        for number in range(count)
    ]


def delivered(
    records: list[IndexEntry],
    limit: int | None,
    role: Role = Role.AGENT,
    warn: int = 10**9,
    page_limit: int = TOOL_RESULT_LIMIT_CHARS,
):
    context = launch_context(role, records, None, [], warn)
    return fit(context, records, limit, page_limit=page_limit)


def closing_line(text: str) -> str:
    """The fitted section's closing line (a builder's doctor pointer comes after it)."""
    [line] = [line for line in text.splitlines() if "memory records are not listed here" in line]
    return line


def test_a_section_that_fits_is_carried_unchanged() -> None:
    records = entries(20)
    context = launch_context(Role.AGENT, records, None, [], 10**9)

    carried = fit(context, records, 10_000, page_limit=TOOL_RESULT_LIMIT_CHARS)

    assert carried.text == context.text
    assert (carried.fitted, carried.listed, carried.records) == (False, 20, 20)
    assert carried.newest is not None
    assert carried.newest.name == "record-0019"
    assert carried.newest.listed


def test_a_section_over_the_limit_lists_whole_lines_in_priority_order_within_it() -> None:
    records = entries(300)

    carried = delivered(records, 10_000)

    assert carried.fitted
    assert carried.chars <= 10_000
    assert carried.text.startswith(PREAMBLES[Role.AGENT] + "\n\n")
    lines = [line for line in carried.text.splitlines() if line.startswith("- ")]
    assert len(lines) == carried.listed
    assert 0 < carried.listed < 300
    # Whole lines only, and the first ones in priority order: user, then feedback, newest first.
    expected = [index_line(record) for record in priority_order(records)][: carried.listed]
    assert lines == expected
    assert lines[0].startswith("- record-0296 (user)")
    closing = carried.text.rstrip("\n").splitlines()[-1]
    assert closing.startswith(f"({300 - carried.listed:,} of 300 memory records are not listed")
    assert "10,000 characters" in closing
    assert "lazy_memory_recall(), which returns every record's line in one call" in closing
    assert carried.newest is not None
    assert carried.newest.name == "record-0299"


def test_priority_is_by_type_then_newest_then_name() -> None:
    same_time = START
    records = [
        IndexEntry("b-ref", RecordType.REFERENCE, "d", 1, same_time),
        IndexEntry("z-user-old", RecordType.USER, "d", 1, same_time),
        IndexEntry("a-user-old", RecordType.USER, "d", 1, same_time),
        IndexEntry("user-new", RecordType.USER, "d", 1, same_time + timedelta(seconds=1)),
        IndexEntry("project", RecordType.PROJECT, "d", 1, same_time + timedelta(days=9)),
        IndexEntry("feedback", RecordType.FEEDBACK, "d", 1, same_time),
    ]

    names = [record.name for record in priority_order(records)]

    assert names == ["user-new", "a-user-old", "z-user-old", "feedback", "project", "b-ref"]


def test_the_limit_counts_utf16_code_units_as_claude_code_does() -> None:
    assert harness_length("abc") == 3
    assert harness_length("한국어") == 3
    assert harness_length("🚀") == 2
    records = entries(200, description="배포 절차 🚀🚀 스테이징 서버에 올리는 방법 🚀")

    carried = delivered(records, 10_000)

    assert carried.fitted
    assert harness_length(carried.text) <= 10_000
    assert len(carried.text.encode("utf-16-le")) // 2 == carried.chars


def test_a_builders_fitted_section_keeps_the_doctor_pointer_within_the_limit() -> None:
    records = entries(300)

    carried = delivered(records, 10_000, role=Role.BUILDER, warn=4096)

    assert carried.chars <= 10_000
    assert carried.text.startswith(PREAMBLES[Role.BUILDER] + "\n\n")
    assert carried.text.endswith(DOCTOR_POINTER + "\n")


def test_an_unavailable_marker_with_a_huge_error_still_fits() -> None:
    context = unavailable_context(Role.BUILDER, "x" * 50_000, 4096)

    carried = fit(context, [], 10_000, page_limit=TOOL_RESULT_LIMIT_CHARS)

    assert carried.chars <= 10_000
    assert carried.text.startswith("MEMORY INDEX UNAVAILABLE (xxx")
    assert "Retry with lazy_memory_recall()" in carried.text
    assert not carried.available


def test_an_empty_store_is_carried_as_the_empty_section() -> None:
    carried = delivered([], 10_000)

    assert "No memory records have been saved" in carried.text
    assert not carried.fitted
    assert carried.available


@pytest.mark.parametrize("limit", [2_000, 10_000])
def test_pages_are_within_the_limit_and_hold_every_line_once(limit: int) -> None:
    text = launch_context(Role.AGENT, entries(500), None, [], 10**9).text

    chunks = pages(text, limit, "lazy_memory_recall(page={page})")

    assert len(chunks) > 1
    assert all(harness_length(chunk) <= limit for chunk in chunks)
    for number, chunk in enumerate(chunks[:-1], start=1):
        assert chunk.endswith(f"lazy_memory_recall(page={number + 1}) gives page {number + 1})\n")
    bodies = [chunk.rsplit("\n(page ", 1)[0] if chunk != chunks[-1] else chunk for chunk in chunks]
    assert "".join(bodies) == text


def test_a_section_within_one_page_is_one_page_unchanged() -> None:
    text = launch_context(Role.AGENT, entries(5), None, [], 10**9).text

    assert pages(text, 10_000, "lazy_memory_recall(page={page})") == [text]


def one_page_limit(text: str) -> int:
    """The smallest tool limit at which recall gives text as one page."""
    limit = harness_length(text)
    while len(pages(text, limit, RECALL_PAGE)) > 1:
        limit += 1
    return limit


@pytest.mark.parametrize("role", list(Role))
def test_the_closing_line_names_one_call_when_the_section_is_one_tool_result(role: Role) -> None:
    records = entries(300)
    section = launch_context(role, records, None, [], 4096).text
    limit = one_page_limit(section)

    carried = delivered(records, HOOK_LIMIT, role, 4096, page_limit=limit)

    assert len(pages(section, limit, RECALL_PAGE)) == page_count(section, limit, RECALL_PAGE) == 1
    assert closing_line(carried.text).endswith(
        "Read the whole index with lazy_memory_recall(), which returns every record's line in "
        'one call, or search it with lazy_search(query="in:memories ...").)'
    )


@pytest.mark.parametrize("role", list(Role))
def test_the_closing_line_names_every_page_when_the_section_is_not_one(role: Role) -> None:
    records = entries(300)
    section = launch_context(role, records, None, [], 4096).text
    limit = one_page_limit(section) - 1  # one character short of one page: two
    few = max(limit // 3, 1_000)  # a third of that: more pages

    two = delivered(records, HOOK_LIMIT, role, 4096, page_limit=limit)
    more = delivered(records, HOOK_LIMIT, role, 4096, page_limit=few)

    assert len(pages(section, limit, RECALL_PAGE)) == page_count(section, limit, RECALL_PAGE) == 2
    assert closing_line(two.text).endswith(
        "Read the whole index in 2 calls, lazy_memory_recall(page=1) to "
        'lazy_memory_recall(page=2), or search it with lazy_search(query="in:memories ...").)'
    )
    count = len(pages(section, few, RECALL_PAGE))
    assert count == page_count(section, few, RECALL_PAGE) > 2
    assert f"in {count} calls, lazy_memory_recall(page=1) to lazy_memory_recall(page={count})," in (
        closing_line(more.text)
    )
    assert "one call" not in two.text + more.text
    for fitted in (two, more):
        assert fitted.chars <= HOOK_LIMIT
        if role == Role.BUILDER:
            assert fitted.text.endswith(DOCTOR_POINTER + "\n")


@pytest.mark.parametrize(("count", "calls"), [(3_000, 1), (5_000, 2)])
def test_at_the_default_limits_recall_needs_two_pages_at_five_thousand_records(
    count: int, calls: int
) -> None:
    records = [
        IndexEntry(record.name, record.type, record.description, 1, START + timedelta(minutes=n))
        for n, record in enumerate(realistic_records(count))
    ]
    section = launch_context(Role.BUILDER, records, None, [], 4096).text

    carried = delivered(records, HOOK_LIMIT, Role.BUILDER, 4096)

    assert len(pages(section, TOOL_RESULT_LIMIT_CHARS, RECALL_PAGE)) == calls
    closing = closing_line(carried.text)
    if calls == 1:
        assert "lazy_memory_recall(), which returns every record's line in one call" in closing
    else:
        assert "in 2 calls, lazy_memory_recall(page=1) to lazy_memory_recall(page=2)," in closing
