"""The launch-context renderer's shortcuts give exactly what the plain rules (§4) give."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    EMPTY,
    Role,
    assemble,
    assembled_size,
    launch_context,
    reframed,
    size_of,
)
from lazy_memory.engine.index import IndexEntry, collapse_whitespace, index_line
from lazy_memory.engine.records import Actor, ActorKind, RecordType

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
ALICE = Actor(kind=ActorKind.HUMAN, detail="alice")
RECORDS = [
    IndexEntry("alpha", RecordType.PROJECT, "How we deploy", 1, T0),
    IndexEntry("café", RecordType.USER, "Prefers   tabs\u2028and\tünïcode ✓", 3, T0),
    IndexEntry("zeta", RecordType.FEEDBACK, " padded ", 2, T0),
]
COMPACT = Compact(
    preamble="# Compacted",
    summary="- alpha: how we deploy\n- café: préfère\n",
    generator="mechanical",
    generated_at=T0,
    generated_by=ALICE,
    watermark={"alpha": 1, "café": 2, "gone": 4},
)


@given(st.text())
def test_collapsing_whitespace_is_splitting_and_joining(text: str) -> None:
    assert collapse_whitespace(text) == " ".join(text.split())


@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000ab")))
def test_collapsing_whitespace_is_splitting_and_joining_for_every_kind_of_space(
    text: str,
) -> None:
    assert collapse_whitespace(text) == " ".join(text.split())


def test_the_measured_size_is_the_size_of_the_assembled_section() -> None:
    for records, compact, removed in [
        ([], None, []),
        (RECORDS, None, []),
        (RECORDS, COMPACT, []),
        (RECORDS, COMPACT, ["gone"]),
        ([], COMPACT, ["gone"]),
    ]:
        assert assembled_size(records, compact, removed) == size_of(
            assemble(records, compact, removed)
        )


def test_the_plain_section_is_the_preamble_and_one_line_per_record() -> None:
    text = assemble(RECORDS, None, [])
    assert text.endswith("\n".join(index_line(record) for record in RECORDS) + "\n")
    assert "- café (user): Prefers tabs and ünïcode ✓\n" in text
    assert assemble([], None, []).endswith("\n\n" + EMPTY + "\n")


def test_the_builders_pointer_is_added_over_the_threshold_and_never_counted() -> None:
    section = assemble(RECORDS, COMPACT, ["gone"])
    size = size_of(section)

    builder = launch_context(Role.BUILDER, RECORDS, COMPACT, ["gone"], warn_bytes=size - 1)
    agent = launch_context(Role.AGENT, RECORDS, COMPACT, ["gone"], warn_bytes=size - 1)
    under = launch_context(Role.BUILDER, RECORDS, COMPACT, ["gone"], warn_bytes=size)

    assert builder.text == section + DOCTOR_POINTER + "\n"
    assert agent.text == under.text == section
    assert builder.bytes == agent.bytes == under.bytes == size
    assert builder.over_threshold
    assert agent.over_threshold
    assert not under.over_threshold
    assert builder.compacted


def test_a_context_reframed_for_the_other_role_is_the_one_rendered_for_it() -> None:
    size = size_of(assemble(RECORDS, None, []))
    for warn_bytes in (size - 1, size):
        builder = launch_context(Role.BUILDER, RECORDS, None, [], warn_bytes)
        agent = launch_context(Role.AGENT, RECORDS, None, [], warn_bytes)

        assert reframed(builder, Role.AGENT) == agent
        assert reframed(agent, Role.BUILDER) == builder
        assert reframed(builder, Role.BUILDER) == builder
