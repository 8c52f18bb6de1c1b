"""The launch-context renderer's shortcuts give exactly what the plain rules (§4) give, and
each role's section opens with its own preamble: the session's one instruction about memory."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.context import (
    COMPACT_PREAMBLES,
    DOCTOR_POINTER,
    EMPTY,
    PREAMBLES,
    Role,
    assemble,
    assembled_size,
    launch_context,
    reframed,
    size_of,
)
from lazy_memory.engine.index import IndexEntry, collapse_whitespace, index_line
from lazy_memory.engine.records import RecordType
from tests.support.actors import ALICE
from tests.support.clocks import T0

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


@pytest.mark.parametrize("role", list(Role))
def test_the_measured_size_is_the_size_of_the_assembled_section(role: Role) -> None:
    for records, compact, removed in [
        ([], None, []),
        (RECORDS, None, []),
        (RECORDS, COMPACT, []),
        (RECORDS, COMPACT, ["gone"]),
        ([], COMPACT, ["gone"]),
    ]:
        assert assembled_size(role, records, compact, removed) == size_of(
            assemble(role, records, compact, removed)
        )


def test_the_plain_section_is_the_preamble_and_one_line_per_record() -> None:
    text = assemble(Role.BUILDER, RECORDS, None, [])
    assert text.startswith(PREAMBLES[Role.BUILDER] + "\n\n")
    assert text.endswith("\n".join(index_line(record) for record in RECORDS) + "\n")
    assert "- café (user): Prefers tabs and ünïcode ✓\n" in text
    assert assemble(Role.AGENT, [], None, []).endswith("\n\n" + EMPTY + "\n")


def test_the_builder_is_told_to_save_and_the_agent_that_it_is_read_only() -> None:
    for preambles in (PREAMBLES, COMPACT_PREAMBLES):
        builder, agent = preambles[Role.BUILDER], preambles[Role.AGENT]
        for text in (builder, agent):
            assert text.startswith("# Project memory\n")
            assert 'lazy_memory_recall(name="...")' in text
            assert 'lazy_search(query="in:memories ...")' in text
            assert "harness's own memory" in text
        assert "Save new knowledge with lazy_memory_save" in builder
        assert "lazy_memory_save" not in agent
        assert "Agents are read-only: save nothing" in agent
        assert "final summary, for the human or builder to decide" in agent
    # Paid on every launch: each stays a short paragraph.
    assert all(len(text) < 450 for text in [*PREAMBLES.values(), *COMPACT_PREAMBLES.values()])


@pytest.mark.parametrize("role", list(Role))
def test_a_compacted_section_opens_with_the_role_s_preamble_never_the_stored_one(
    role: Role,
) -> None:
    section = launch_context(role, RECORDS, COMPACT, ["gone"], 10**9).text

    assert section.startswith(COMPACT_PREAMBLES[role] + "\n\n" + COMPACT.summary)
    assert COMPACT.preamble not in section


def test_the_builders_pointer_is_added_over_the_threshold_and_never_counted() -> None:
    section = assemble(Role.BUILDER, RECORDS, COMPACT, ["gone"])
    size = size_of(section)

    builder = launch_context(Role.BUILDER, RECORDS, COMPACT, ["gone"], warn_bytes=size - 1)
    agent = launch_context(Role.AGENT, RECORDS, COMPACT, ["gone"], warn_bytes=size - 1)
    under = launch_context(Role.BUILDER, RECORDS, COMPACT, ["gone"], warn_bytes=size)

    assert builder.text == section + DOCTOR_POINTER + "\n"
    assert under.text == section
    assert agent.text == assemble(Role.AGENT, RECORDS, COMPACT, ["gone"])
    assert builder.bytes == under.bytes == size
    assert agent.bytes == size_of(agent.text)
    assert builder.over_threshold
    assert agent.over_threshold
    assert not under.over_threshold
    assert builder.compacted


@pytest.mark.parametrize("compact", [None, COMPACT])
def test_a_context_reframed_for_the_other_role_is_the_one_rendered_for_it(
    compact: Compact | None,
) -> None:
    removed = [] if compact is None else ["gone"]
    sizes = [size_of(assemble(role, RECORDS, compact, removed)) for role in Role]
    # Over or under for both roles, and over for one only (their preambles differ in size).
    for warn_bytes in sorted({size + step for size in sizes for step in (-1, 0)}):
        builder = launch_context(Role.BUILDER, RECORDS, compact, removed, warn_bytes)
        agent = launch_context(Role.AGENT, RECORDS, compact, removed, warn_bytes)

        assert reframed(builder, Role.AGENT) == agent
        assert reframed(agent, Role.BUILDER) == builder
        assert reframed(builder, Role.BUILDER) == builder
