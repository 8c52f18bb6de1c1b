"""Never grow, against what is injected now, and doctor's remedy as the one that then works.

Issue 18: `auto` without a model replaced a small model compact with a far bigger mechanical
one, and doctor then sent the user round a circle of compacts that could not help. Here every
state of the store is walked: doctor's remedy is run, must succeed and must help, and the walk
must end with doctor satisfied, never repeating a remedy.
"""

from __future__ import annotations

import logging

import pytest

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import MEASURED_ROLE, OVER_THRESHOLD_LOG, Role
from lazy_memory.engine.doctor import Diagnosis, Remedy
from lazy_memory.engine.errors import CompactRejected
from lazy_memory.engine.service import MemoryService
from tests.unit.compaction_scenes import ScriptedSummarizer, fill, service
from tests.unit.doctor_states import (
    COMMANDS,
    OVER,
    STATES,
    State,
    behind_cheaper_than_a_recompact,
    behind_costing_more_than_the_plain_index,
)

UNDER = 10**6


# How the test runs each remedy: compacting in auto mode with no model configured (the
# mechanical fallback), as the user did.
async def run_remedy(memory: MemoryService, diagnosis: Diagnosis) -> None:
    """Do what doctor advised; raises if it fails."""
    if diagnosis.remedy is Remedy.COMPACT:
        await memory.compact(Mode.AUTO)
    elif diagnosis.remedy is Remedy.CLEAR:
        assert await memory.clear_compact()
    else:
        memory.warn_bytes = diagnosis.bytes


async def walk(memory: MemoryService) -> list[Remedy]:
    """Follow doctor's remedies until it has none; the remedies it gave, in order."""
    taken: list[Remedy] = []
    while (diagnosis := await memory.doctor()).remedy is not Remedy.NONE:
        assert diagnosis.remedy not in taken, f"doctor went round a circle: {taken}"
        assert COMMANDS[diagnosis.remedy] in diagnosis.advice
        if diagnosis.remedy is Remedy.CURATE:
            await assert_compacting_cannot_help(memory, diagnosis)
        await run_remedy(memory, diagnosis)
        if diagnosis.remedy is not Remedy.CURATE:
            assert (await memory.launch_context(MEASURED_ROLE)).bytes < diagnosis.bytes
        taken.append(diagnosis.remedy)
    return taken


async def assert_compacting_cannot_help(memory: MemoryService, diagnosis: Diagnosis) -> None:
    """What doctor did not recommend is rejected, or (a current compact) changes nothing."""
    try:
        await memory.compact(Mode.AUTO)
    except CompactRejected:
        return
    assert (await memory.launch_context(MEASURED_ROLE)).bytes == diagnosis.bytes


@pytest.mark.parametrize(("state", "remedies"), STATES, ids=[s.__name__ for s, _ in STATES])
@pytest.mark.parametrize("warn_bytes", [OVER, UNDER], ids=["over", "under"])
async def test_doctor_s_remedy_is_the_one_that_then_succeeds(
    storage: SqliteStorage, state: State, remedies: list[Remedy], warn_bytes: int
) -> None:
    await state(storage)
    memory = service(storage, warn_bytes=warn_bytes)

    taken = await walk(memory)

    assert taken == (remedies if warn_bytes == OVER else [])
    assert (await memory.doctor()).remedy is Remedy.NONE


async def test_doctor_says_when_a_recompact_would_be_rejected(storage: SqliteStorage) -> None:
    await behind_cheaper_than_a_recompact(storage)
    memory = service(storage, warn_bytes=OVER)

    diagnosis = await memory.doctor()

    assert diagnosis.written_since_compact == ["saved-later"]
    assert diagnosis.remedy is Remedy.CURATE
    assert "The compact is behind the records, but `lazy memory compact` would be rejected" in (
        diagnosis.advice
    )
    assert f"{diagnosis.bytes} bytes now" in diagnosis.advice
    assert f"{diagnosis.bytes_without_compact} bytes with the plain index" in diagnosis.advice


# Rule 5 against what is injected now.


async def test_auto_never_replaces_a_small_compact_with_a_bigger_mechanical_one(
    storage: SqliteStorage,
) -> None:
    await behind_cheaper_than_a_recompact(storage)
    old = await storage.get_compact()
    injected = (await service(storage).launch_context(MEASURED_ROLE)).bytes

    with pytest.raises(CompactRejected) as error:
        await service(storage).compact(Mode.AUTO)

    assert await storage.get_compact() == old
    message = error.value.message
    assert "would make the injected memory section bigger than it is now" in message
    assert f"{injected} bytes now with the current compact and what was written since" in message
    assert "bytes with the plain index" in message
    assert "nothing was written and the previous compact is kept" in message
    assert "What helps instead: curate the records" in message


async def test_a_rejection_names_clear_when_the_plain_index_is_smaller_than_now(
    storage: SqliteStorage,
) -> None:
    await behind_costing_more_than_the_plain_index(storage)

    with pytest.raises(CompactRejected) as error:
        await service(storage).compact(Mode.MECHANICAL)

    assert "What helps instead: run `lazy memory compact --clear`: the plain index" in (
        error.value.message
    )


# The fallback reason survives a rejection of the mechanical compact.


@pytest.mark.parametrize(
    ("summarizer", "reason"),
    [
        (None, "no summarizer is configured"),
        (ScriptedSummarizer(lambda prompt: prompt * 2), "the model's summary would not shrink"),
    ],
    ids=["no-model", "model-rejected"],
)
async def test_auto_says_why_it_fell_back_when_the_mechanical_compact_is_rejected_too(
    storage: SqliteStorage, summarizer: ScriptedSummarizer | None, reason: str
) -> None:
    memory = service(storage, summarizer)
    await fill(memory, 1)

    with pytest.raises(CompactRejected) as error:
        await memory.compact(Mode.AUTO)

    assert error.value.message.startswith(f"fell back to the mechanical generator ({reason}")
    assert "the mechanical compact would not shrink" in error.value.message
    assert error.value.fallback_reason is not None
    assert error.value.fallback_reason.startswith(reason)
    assert error.value.data == {"fallback_reason": error.value.fallback_reason}


async def test_a_rejection_without_a_fallback_carries_no_reason(storage: SqliteStorage) -> None:
    memory = service(storage)
    await fill(memory, 1)

    with pytest.raises(CompactRejected) as error:
        await memory.compact(Mode.MECHANICAL)

    assert error.value.data == {}


# The over-threshold line: every time a section is assembled, not once per engine process.


async def test_the_over_threshold_line_is_logged_at_every_launch_of_one_engine(
    storage: SqliteStorage, caplog: pytest.LogCaptureFixture
) -> None:
    memory = service(storage, warn_bytes=OVER)
    await fill(memory, 5)

    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            await memory.launch_context(Role.BUILDER)  # the same section, from the engine's cache
        await memory.launch_context(Role.AGENT, 10_000)

    assert [r.message for r in caplog.records].count(OVER_THRESHOLD_LOG) == 4
