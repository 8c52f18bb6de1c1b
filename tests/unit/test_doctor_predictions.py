"""Doctor predicts with the generator `lazy memory compact` would use (issue 30, point 7).

With a model configured, `lazy memory compact` asks it first, and only a call tells what its
summary is: doctor, which makes no model call, must then say it cannot know and what to try,
never that the compact would be rejected. The model is the real anthropic SDK against the
tests' fake Messages API; every state of tests/unit/doctor_states.py is walked again,
following doctor's remedies with a model whose summary is accepted and with one whose summary
is too long, and with no model that can be called.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lazy_memory.adapters.config import Settings
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.adapters.summarizers.anthropic_api import AnthropicSummarizer
from lazy_memory.adapters.summarizers.choice import OFFLINE, open_summarizer
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import Role
from lazy_memory.engine.doctor import Diagnosis, Remedy
from lazy_memory.engine.errors import CompactRejected
from lazy_memory.engine.service import MemoryService
from tests.support.fake_anthropic import FakeAnthropic, Received
from tests.unit.compaction_scenes import merged_themes, service
from tests.unit.doctor_states import (
    COMMANDS,
    OVER,
    STATES,
    State,
    behind_cheaper_than_a_recompact,
    current,
)

MODEL = "anthropic (claude-haiku-4-5)"
CANNOT_KNOW = "doctor cannot know without calling the model"


def themes(request: Received) -> str:
    """A model's short summary that names every record: accepted."""
    return merged_themes(request.prompt)


def bloated(request: Received) -> str:
    """A model's summary longer than the index it was given: rejected."""
    return request.prompt * 2


def anthropic(tmp_path: Path, **settings: object) -> AnthropicSummarizer:
    return AnthropicSummarizer(Settings(root=tmp_path, data_dir=tmp_path / ".lazy", **settings))


async def run_remedy(memory: MemoryService, diagnosis: Diagnosis) -> str:
    """Do what doctor advised, as a user reads it; what was done."""
    if diagnosis.remedy in (Remedy.COMPACT, Remedy.TRY_COMPACT):
        try:
            await memory.compact(Mode.AUTO)
        except CompactRejected:
            # Only a try may be rejected; its advice says what helps then.
            assert diagnosis.remedy is Remedy.TRY_COMPACT, diagnosis.advice
            after = diagnosis.advice.rpartition("If it is rejected, ")[2]
            if after.startswith(COMMANDS[Remedy.CLEAR]):
                assert await memory.clear_compact()
                return "try-compact, rejected, clear"
            assert after.startswith("curate the records"), diagnosis.advice
            memory.warn_bytes = diagnosis.bytes
            return "try-compact, rejected, curate"
        return diagnosis.remedy.value
    if diagnosis.remedy is Remedy.CLEAR:
        assert await memory.clear_compact()
    else:
        memory.warn_bytes = diagnosis.bytes
    return diagnosis.remedy.value


async def walk(memory: MemoryService) -> list[str]:
    """Follow doctor's remedies until it has none; what was done, in order."""
    taken: list[str] = []
    while (diagnosis := await memory.doctor()).remedy is not Remedy.NONE:
        assert diagnosis.remedy.value not in taken, f"doctor went round a circle: {taken}"
        if diagnosis.remedy is Remedy.TRY_COMPACT:
            assert CANNOT_KNOW in diagnosis.advice
            assert "would be rejected" not in diagnosis.advice
        else:
            assert COMMANDS[diagnosis.remedy] in diagnosis.advice
        done = await run_remedy(memory, diagnosis)
        if diagnosis.remedy in (Remedy.COMPACT, Remedy.CLEAR):
            assert (await memory.launch_context(Role.AGENT)).bytes < diagnosis.bytes
        taken.append(done)
    return taken


ACCEPTED = {
    "no_compact_shrinkable": ["compact", "curate"],
    "no_compact_not_shrinkable": ["try-compact", "curate"],
    "current": ["try-compact", "curate"],
    "behind_shrinkable": ["compact", "curate"],
    "behind_costing_more_than_the_plain_index": ["clear", "try-compact", "curate"],
    "behind_cheaper_than_a_recompact": ["try-compact", "curate"],
}
"""What a walk does when the model's summary is accepted: where the mechanical compact would
be rejected, doctor tries the model, and the compact it tried succeeds."""
REJECTED = {
    "no_compact_shrinkable": ["compact", "curate"],
    "no_compact_not_shrinkable": ["try-compact, rejected, curate"],
    "current": ["try-compact", "curate"],
    "behind_shrinkable": ["compact", "curate"],
    "behind_costing_more_than_the_plain_index": ["clear", "try-compact, rejected, curate"],
    "behind_cheaper_than_a_recompact": ["try-compact, rejected, curate"],
}
"""And when it is rejected: the try writes nothing (or the mechanical compact again, marked),
and what the advice said helps then is what ends the walk."""


@pytest.mark.parametrize("state", [state for state, _ in STATES], ids=lambda state: state.__name__)
@pytest.mark.parametrize(("answer", "expected"), [(themes, ACCEPTED), (bloated, REJECTED)])
async def test_with_a_model_doctor_s_remedies_end_the_walk_and_none_is_wrongly_refused(
    storage: SqliteStorage,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    state: State,
    answer: object,
    expected: dict[str, list[str]],
) -> None:
    await state(storage)
    fake_anthropic.script(answer)  # type: ignore[arg-type]
    memory = service(storage, anthropic(tmp_path), warn_bytes=OVER)

    taken = await walk(memory)

    assert taken == expected[state.__name__]
    assert (await memory.doctor()).remedy is Remedy.NONE


async def test_the_issue_s_case_doctor_no_longer_advises_against_the_compact_that_works(
    storage: SqliteStorage,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    await behind_cheaper_than_a_recompact(storage)
    fake_anthropic.script(themes)
    memory = service(storage, anthropic(tmp_path), warn_bytes=OVER)

    diagnosis = await memory.doctor()
    asked = len(fake_anthropic.requests)
    outcome = await memory.compact(Mode.AUTO)

    assert asked == 0, "doctor called the model"
    assert diagnosis.remedy is Remedy.TRY_COMPACT
    assert (diagnosis.next_compact_model, diagnosis.no_model_reason) == (MODEL, None)
    assert diagnosis.advice.startswith(
        "The compact is behind the records, and a mechanical compact would make the injected "
        "memory section bigger than it is now ("
    )
    assert f"`lazy memory compact` asks {MODEL} first, whose summary may be smaller" in (
        diagnosis.advice
    )
    assert "a rejected compact writes nothing and the current compact stays" in diagnosis.advice
    assert diagnosis.advice.endswith("If it is rejected, " + COMMANDS_CURATE)
    assert outcome.compact.generator == "anthropic"
    assert outcome.bytes_with < diagnosis.bytes


COMMANDS_CURATE = (
    "curate the records: remove stale ones (`lazy memory rm NAME`), merge overlapping ones, "
    "shorten long descriptions; or raise [memory] warn_bytes in lazy.toml if this size is "
    "acceptable."
)


@pytest.mark.parametrize(
    ("environment", "why"),
    [
        ({"LAZY_OFFLINE": "1"}, OFFLINE),
        ({}, "no ANTHROPIC_API_KEY is set: export one, or set [compact] command in lazy.toml"),
    ],
    ids=["offline", "no-key"],
)
async def test_without_a_model_to_call_doctor_predicts_the_mechanical_compact_and_says_why(
    storage: SqliteStorage,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    why: str,
) -> None:
    await behind_cheaper_than_a_recompact(storage)
    if environment:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unused")
    settings = Settings(root=tmp_path, data_dir=tmp_path / ".lazy", offline=bool(environment))
    memory = service(storage, open_summarizer(settings), warn_bytes=OVER)

    diagnosis = await memory.doctor()

    assert diagnosis.remedy is Remedy.CURATE
    assert (diagnosis.next_compact_model, diagnosis.no_model_reason) == (None, why)
    assert (
        "The compact is behind the records, but `lazy memory compact` would be rejected: it "
        f"would use the mechanical generator ({why}), and a new compact would make"
    ) in diagnosis.advice
    with pytest.raises(CompactRejected):
        await memory.compact(Mode.AUTO)


async def test_a_current_compact_is_tried_again_only_by_a_model_that_has_not_lost_on_it(
    storage: SqliteStorage,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
) -> None:
    await current(storage)  # a mechanical compact of 60 records, written with no model
    fake_anthropic.script(bloated)
    memory = service(storage, anthropic(tmp_path), warn_bytes=OVER)

    before = await memory.doctor()
    await memory.compact(Mode.AUTO)  # the model's summary is rejected: mechanical again
    compact = await storage.get_compact()
    after = await memory.doctor()
    other = await service(storage, anthropic(tmp_path, compact_model="claude-other")).doctor()

    assert before.remedy is Remedy.TRY_COMPACT
    assert before.advice.startswith(
        "The compact is current, but the mechanical generator wrote it, and "
    )
    assert compact is not None
    assert (compact.generator, compact.model_rejected) == ("mechanical", MODEL)
    assert after.remedy is Remedy.CURATE
    assert f"{MODEL}'s summary of these records was rejected when it was written" in after.advice
    # Another model has not been asked: it may do better.
    assert other.remedy is Remedy.TRY_COMPACT
    assert "asks anthropic (claude-other) first" in other.advice
