"""The five rules of compaction (docs/architecture.md, Compaction), each with a test that
catches its breach.

The model is a scripted summarizer with canned answers; the store is a real one.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lazy_memory.adapters.files.storage import FileStorage
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compaction import NOT_COVERED, Mode, mechanical_summary
from lazy_memory.engine.context import (
    DOCTOR_POINTER,
    OVER_THRESHOLD_LOG,
    REMOVED_SINCE,
    WRITTEN_SINCE,
    Role,
    size_of,
)
from lazy_memory.engine.doctor import Remedy
from lazy_memory.engine.errors import CompactRejected, LLMUnavailable
from lazy_memory.engine.index import index_line
from lazy_memory.engine.records import HistoryEntry, Record
from tests.unit.compaction_scenes import (
    ScriptedSummarizer,
    fill,
    merged_themes,
    prompted_names,
    service,
)


async def snapshot(storage: SqliteStorage) -> tuple[list[Record], list[HistoryEntry]]:
    return await storage.list_records(), await storage.history()


# Rule 1: derived. Records are never modified, no history is written.


@pytest.mark.parametrize("mode", list(Mode))
async def test_rule_1_compaction_leaves_records_and_history_byte_identical(
    storage: SqliteStorage, mode: Mode
) -> None:
    memory = service(storage, ScriptedSummarizer(merged_themes))
    await fill(memory, 60)
    before = await snapshot(storage)

    await memory.compact(mode)
    await memory.compact(mode)
    await memory.clear_compact()

    assert await snapshot(storage) == before


async def test_rule_1_a_rejected_compaction_writes_nothing_at_all(storage: SqliteStorage) -> None:
    memory = service(storage)
    await fill(memory, 1)
    before = await snapshot(storage)

    with pytest.raises(CompactRejected):
        await memory.compact(Mode.MECHANICAL)

    assert await snapshot(storage) == before
    assert await storage.get_compact() is None


# Rule 2: injection = compact + everything newer (+ what was removed since).


async def test_rule_2_injection_is_the_compact_plus_every_later_write(
    storage: SqliteStorage,
) -> None:
    memory = service(storage, ScriptedSummarizer(merged_themes))
    records = await fill(memory, 60)
    await memory.compact(Mode.LLM)
    changed, removed, revived = records[0], records[1], records[2]
    await memory.save(changed.name, description="A description changed after the compact")
    await memory.remove(removed.name)
    await memory.remove(revived.name)
    revived_again = await memory.save(
        revived.name, type="project", description="Came back after removal", body=""
    )
    added = await memory.save("brand-new", type="project", description="Saved after", body="")

    text = (await memory.launch_context(Role.AGENT)).text

    summary_part, newer_part = text.split(WRITTEN_SINCE)
    assert "Themes: " in summary_part
    newer_lines, removed_part = newer_part.split(REMOVED_SINCE)
    assert newer_lines.strip().splitlines() == [
        index_line(record)
        for record in sorted(
            [await memory.recall(changed.name), revived_again, added], key=lambda r: r.name
        )
    ]
    assert removed_part.strip().splitlines() == [f"- {removed.name}"]


# Rule 3: every generation reads the records, never the previous compact.


@pytest.mark.parametrize("mode", [Mode.MECHANICAL, Mode.LLM])
async def test_rule_3_generation_reads_the_records_not_the_previous_compact(
    storage: SqliteStorage, mode: Mode
) -> None:
    summarizer = ScriptedSummarizer(merged_themes)
    memory = service(storage, summarizer)
    await fill(memory, 60)
    first = (await memory.compact(Mode.LLM)).compact
    # Bigger than the plain index, so that any fresh compact may replace it (never grow).
    await storage.put_compact(first.model_copy(update={"summary": "STALE-SUMMARY " * 1000}))

    fresh = (await memory.compact(mode)).compact

    assert "STALE-SUMMARY" not in fresh.summary
    assert all("STALE-SUMMARY" not in prompt for prompt in summarizer.prompts)
    assert fresh.watermark == await storage.live_revisions()


# Rule 4: size is a warning; doctor owns the diagnosis and the remedy.


async def test_rule_4_over_the_threshold_nothing_is_truncated_and_builders_get_a_pointer(
    storage: SqliteStorage, caplog: pytest.LogCaptureFixture
) -> None:
    memory = service(storage, warn_bytes=1000)
    records = await fill(memory, 60)

    with caplog.at_level(logging.WARNING):
        builder = await memory.launch_context(Role.BUILDER)
        agent = await memory.launch_context(Role.AGENT)

    assert builder.over_threshold
    assert agent.over_threshold
    assert all(index_line(record) in agent.text for record in records)
    assert builder.text.endswith("\n" + DOCTOR_POINTER + "\n")
    assert builder.bytes == size_of(builder.text.removesuffix(DOCTOR_POINTER + "\n"))
    assert agent.bytes == size_of(agent.text)
    assert DOCTOR_POINTER not in agent.text
    # Logged each time a launch's section is assembled, not once per engine process.
    assert [r.message for r in caplog.records].count(OVER_THRESHOLD_LOG) == 2


async def test_rule_4_under_the_threshold_there_is_no_pointer(storage: SqliteStorage) -> None:
    memory = service(storage)
    await fill(memory, 5)

    context = await memory.launch_context(Role.BUILDER)

    assert not context.over_threshold
    assert DOCTOR_POINTER not in context.text


# Rule 5: never grow. The comparison is on the assembled section.


async def test_rule_5_a_mechanical_compact_of_a_tiny_store_is_rejected_with_both_sizes(
    storage: SqliteStorage,
) -> None:
    memory = service(storage)
    await fill(memory, 1)

    with pytest.raises(CompactRejected, match=r"\d+ bytes with it, \d+ bytes without") as error:
        await memory.compact(Mode.MECHANICAL)

    assert "What helps instead" in error.value.message


async def test_rule_5_a_summary_that_only_looks_shorter_is_judged_on_the_assembled_section(
    storage: SqliteStorage,
) -> None:
    # The answer is far shorter than the index, but it names nobody: repaired, it carries
    # every index line plus its own text, so the assembled section grows. 6.0 KB to 6.4 KB
    # must never count as a success.
    memory = service(storage, ScriptedSummarizer(lambda prompt: "Various project notes."))
    records = await fill(memory, 60)
    old = (await memory.compact(Mode.MECHANICAL)).compact
    index_bytes = sum(size_of(index_line(record) + "\n") for record in records)
    assert size_of("Various project notes.") < index_bytes

    with pytest.raises(CompactRejected, match="previous compact is kept"):
        await memory.compact(Mode.LLM)

    assert await storage.get_compact() == old


async def test_rule_5_auto_replaces_a_non_shrinking_summary_with_the_mechanical_one(
    storage: SqliteStorage,
) -> None:
    longer = ScriptedSummarizer(lambda prompt: prompt + "\n" + prompt)
    memory = service(storage, longer)
    await fill(memory, 60)

    outcome = await memory.compact(Mode.AUTO)

    assert outcome.compact.generator == "mechanical"
    assert outcome.fallback_reason is not None
    assert "would not shrink" in outcome.fallback_reason
    assert outcome.bytes_with < outcome.bytes_without


# The fallback, omission-repair and rejection paths.


@pytest.mark.parametrize(
    "failure",
    [LLMUnavailable("no ANTHROPIC_API_KEY is set"), LLMUnavailable("timed out after 120 s")],
)
async def test_auto_falls_back_to_mechanical_on_any_model_failure(
    storage: SqliteStorage, failure: LLMUnavailable
) -> None:
    memory = service(storage, ScriptedSummarizer(failure))
    await fill(memory, 60)
    records = await storage.list_records()

    outcome = await memory.compact(Mode.AUTO)

    assert outcome.fallback_reason == failure.message
    assert outcome.compact.generator == "mechanical"
    assert outcome.compact.summary == mechanical_summary(records)


async def test_auto_falls_back_on_an_empty_answer_and_llm_fails_loudly(
    storage: SqliteStorage,
) -> None:
    memory = service(storage, ScriptedSummarizer(lambda prompt: "   \n"))
    await fill(memory, 60)

    assert (await memory.compact(Mode.AUTO)).fallback_reason == "the model returned an empty answer"
    await memory.clear_compact()
    with pytest.raises(LLMUnavailable, match="empty answer"):
        await memory.compact(Mode.LLM)
    assert await storage.get_compact() is None


async def test_names_the_summary_omits_are_appended_verbatim_and_reported(
    storage: SqliteStorage,
) -> None:
    def drops_the_first_three(prompt: str) -> str:
        return "Themes: " + ", ".join(prompted_names(prompt)[3:])

    memory = service(storage, ScriptedSummarizer(drops_the_first_three))
    await fill(memory, 60)
    records = await storage.list_records()

    outcome = await memory.compact(Mode.LLM)

    omitted = [record for record in records if record.name in outcome.omitted]
    assert len(omitted) == 3
    tail = outcome.compact.summary.split(NOT_COVERED)[1]
    assert tail.strip().splitlines() == [index_line(record) for record in omitted]
    text = (await memory.launch_context(Role.AGENT)).text
    assert all(record.name in text for record in records)


def test_the_prompt_asks_for_themes_and_forbids_dropping_names() -> None:
    from lazy_memory.engine.compaction import summary_prompt

    prompt = summary_prompt([])
    assert "themes" in prompt
    assert "MUST mention every record name" in prompt


async def test_the_mechanical_generator_is_lossless(storage: SqliteStorage) -> None:
    memory = service(storage)
    records = await fill(memory, 500)

    summary = (await memory.compact(Mode.MECHANICAL)).compact.summary

    for record in records:
        assert f"- {record.name}: {' '.join(record.description.split())}" in summary
    headings = [line for line in summary.splitlines() if line.startswith("## ")]
    assert headings == ["## user", "## feedback", "## project", "## reference"]


# The launch context when the store cannot be read, and doctor's remedies.


async def test_an_unreadable_store_gives_the_marker_never_the_empty_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = await FileStorage.open(tmp_path)
    empty = await service(files).launch_context(Role.AGENT)
    (tmp_path / "memories.json").write_text("{not json")

    with caplog.at_level(logging.ERROR):
        broken = await service(files).launch_context(Role.AGENT)

    assert broken.text.startswith("MEMORY INDEX UNAVAILABLE (the store at ")
    assert "Retry with lazy_memory_recall()" in broken.text
    assert not broken.available
    assert empty.available
    assert broken.text != empty.text
    assert any(r.levelno == logging.ERROR for r in caplog.records)


async def test_doctor_recommends_compacting_only_when_it_helps(storage: SqliteStorage) -> None:
    memory = service(storage, warn_bytes=1000)
    records = await fill(memory, 60)

    assert (await memory.doctor()).remedy is Remedy.COMPACT
    await memory.compact(Mode.MECHANICAL)
    current = await memory.doctor()
    assert current.remedy is Remedy.CURATE
    assert "compacting again cannot help" in current.advice

    await memory.remove(records[0].name)
    behind = await memory.doctor()
    assert behind.remedy is Remedy.COMPACT
    assert behind.removed_since_compact == [records[0].name]


async def test_doctor_is_quiet_under_the_threshold_and_curates_when_compacting_cannot_help(
    storage: SqliteStorage,
) -> None:
    assert (await service(storage).doctor()).remedy is Remedy.NONE
    memory = service(storage, warn_bytes=10)
    await fill(memory, 1)

    diagnosis = await memory.doctor()

    assert diagnosis.remedy is Remedy.CURATE
    assert "would not make this section smaller" in diagnosis.advice
