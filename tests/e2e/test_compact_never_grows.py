"""Issue 18 as a user meets it: `lazy memory compact` never grows what launches inject, says
why `auto` fell back even when the fallback is rejected too, and `lazy doctor` never sends
the user round a circle; and issue 30's: with a model configured, doctor never advises
against the compact that then succeeds. The model is the real anthropic SDK against the fake
Messages API.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.compacting import fill, themes
from tests.e2e.conftest import Lazy
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.jsonrpc import RawClient

NO_KEY = "no ANTHROPIC_API_KEY is set: export one, or set [compact] command in lazy.toml"
OFFLINE = {"LAZY_OFFLINE": "1"}


def shown(lazy: Lazy) -> str:
    return lazy("memory", "compact", "--show", "--json").stdout


async def a_model_compact_then_a_save(
    lazy: Lazy, project: Path, data_dir: Path, fake_anthropic: FakeAnthropic
) -> None:
    """A small model compact of 60 records, then a record saved since: a mechanical compact
    would be bigger than what launches inject now, the model's summary would not."""
    await fill(project, data_dir, 60)
    fake_anthropic.script(themes)
    assert lazy("memory", "compact").returncode == 0
    lazy("memory", "save", "saved-later", "-t", "project", "-d", "Written after", "--body", "")


async def test_auto_without_a_model_never_replaces_a_small_compact_with_a_bigger_one(
    lazy: Lazy, project: Path, isolated_environment: Path, fake_anthropic: FakeAnthropic
) -> None:
    await a_model_compact_then_a_save(lazy, project, isolated_environment, fake_anthropic)
    before = shown(lazy)
    injected = json.loads(lazy("memory", "context", "--json").stdout)["bytes"]

    rejected = lazy("memory", "compact", environment=OFFLINE)

    assert rejected.returncode == 8
    assert rejected.stderr.count("\n") == 1
    assert "fell back to the mechanical generator (LAZY_OFFLINE=1: no model calls)" in (
        rejected.stderr
    )
    assert "would make the injected memory section bigger than it is now" in rejected.stderr
    assert f"{injected} bytes now with the current compact" in rejected.stderr
    assert "bytes with the plain index): nothing was written" in rejected.stderr
    assert "What helps instead: curate the records" in rejected.stderr
    assert shown(lazy) == before

    # Doctor, over the threshold, says so rather than sending the user back to compact, and
    # the remedy it gives (here: raise warn_bytes) is the one that then satisfies it.
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 200\n")
    doctor = lazy("doctor", environment=OFFLINE)
    assert doctor.returncode == 11
    assert "`lazy memory compact` would be rejected" in doctor.stdout
    assert "raise [memory] warn_bytes" in doctor.stdout
    (project / "lazy.toml").write_text(f"[memory]\nwarn_bytes = {injected}\n")
    assert lazy("doctor", environment=OFFLINE).returncode == 0


async def test_with_a_model_doctor_never_advises_against_the_compact_that_then_succeeds(
    lazy: Lazy, project: Path, isolated_environment: Path, fake_anthropic: FakeAnthropic
) -> None:
    # Issue 30's case, with a model configured.
    await a_model_compact_then_a_save(lazy, project, isolated_environment, fake_anthropic)
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 200\n")
    asked = len(fake_anthropic.requests)

    offline = lazy("doctor", environment=OFFLINE)
    doctor = lazy("doctor")
    diagnosis = json.loads(lazy("doctor", "--json").stdout)
    doctor_asked = len(fake_anthropic.requests) - asked
    compacted = lazy("memory", "compact")
    after = lazy("doctor")

    assert doctor_asked == 0, "doctor called the model"
    # Offline, compact would use the mechanical generator: doctor says so, and why.
    assert offline.returncode == 11
    assert (
        "`lazy memory compact` would be rejected: it would use the mechanical generator "
        "(LAZY_OFFLINE=1: no model calls)"
    ) in offline.stdout
    # With the model, doctor cannot know, says so, and what helps if the try is rejected.
    assert doctor.returncode == 13
    assert "would be rejected" not in doctor.stdout
    assert (
        "`lazy memory compact` asks anthropic (claude-haiku-4-5) first, whose summary may be "
        "smaller; doctor cannot know without calling the model. Run `lazy memory compact` to "
        "try it: a rejected compact writes nothing and the current compact stays. If it is "
        "rejected, curate the records"
    ) in doctor.stdout
    assert (diagnosis["remedy"], diagnosis["next_compact_model"]) == (
        "try-compact",
        "anthropic (claude-haiku-4-5)",
    )
    assert diagnosis["no_model_reason"] is None
    assert compacted.returncode == 0, compacted.stderr
    assert "Wrote the anthropic compact of 61 records" in compacted.stdout
    # No circle: the compact is now current, written by the model doctor would ask again.
    assert after.returncode == 11
    assert "compacting again cannot help" in after.stdout


async def test_doctor_says_clear_when_the_stale_compact_costs_more_than_the_plain_index(
    lazy: Lazy, project: Path, isolated_environment: Path, fake_anthropic: FakeAnthropic
) -> None:
    (record,) = await fill(project, isolated_environment, 1)
    fake_anthropic.script(themes)
    assert lazy("memory", "compact", "--llm").returncode == 0
    lazy("memory", "save", record.name, "-d", "Rewritten after the compact")
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 100\n")

    doctor = lazy("doctor", environment=OFFLINE)
    recompacted = lazy("memory", "compact", environment=OFFLINE)
    cleared = lazy("memory", "compact", "--clear")
    after = lazy("doctor", environment=OFFLINE)

    assert doctor.returncode == 12
    assert "`lazy memory compact` would be rejected" in doctor.stdout
    assert "Instead, run `lazy memory compact --clear`: the plain index" in doctor.stdout
    assert recompacted.returncode == 8
    assert "What helps instead: run `lazy memory compact --clear`" in recompacted.stderr
    assert cleared.returncode == 0
    # No circle: no compact of one record helps, so doctor now asks for curation.
    assert after.returncode == 11
    assert "A compact would not make this section smaller" in after.stdout


def test_the_cli_prints_the_fallback_reason_when_the_mechanical_compact_is_rejected(
    lazy: Lazy,
) -> None:
    lazy("memory", "save", "only-one", "-t", "user", "-d", "The single record", "--body", "")

    rejected = lazy("memory", "compact")

    assert rejected.returncode == 8
    assert rejected.stderr.startswith(
        f"lazy: error: fell back to the mechanical generator ({NO_KEY}), but the mechanical "
        "compact would not shrink"
    )


async def test_the_fallback_reason_is_in_the_json_rpc_error_s_data(tmp_path: Path) -> None:
    engine = await RawClient.spawn(["engine"], os.environ, tmp_path / "engine.log")
    try:
        assert "result" in await engine.initialize()
        saved = {"name": "only-one", "type": "user", "description": "The single", "body": ""}
        await engine.result("lazy/memory/save", saved)

        rejected = await engine.request("lazy/memory/compact", {"mode": "auto"})
        mechanical = await engine.request("lazy/memory/compact", {"mode": "mechanical"})
    finally:
        assert engine.process is not None
        engine.process.kill()
        await engine.process.wait()

    assert rejected["error"]["code"] == -32015
    assert rejected["error"]["data"] == {"type": "CompactRejected", "fallback_reason": NO_KEY}
    assert NO_KEY in rejected["error"]["message"]
    assert mechanical["error"]["data"] == {"type": "CompactRejected"}
