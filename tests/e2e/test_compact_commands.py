"""`lazy memory context`, `lazy memory compact` and `lazy doctor` as a user runs them.

The LLM path runs the real anthropic SDK in the `lazy` process against the fake Messages
API server on loopback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lazy_memory.engine.records import Record
from tests.e2e.compacting import fill, names_in
from tests.e2e.conftest import Lazy
from tests.support.fake_anthropic import FakeAnthropic, error, hang


@pytest.fixture
async def records(project: Path, isolated_environment: Path) -> list[Record]:
    """A store of 60 realistic records."""
    return await fill(project, isolated_environment, 60)


def test_context_prints_the_section_and_json_adds_its_size(
    lazy: Lazy, records: list[Record]
) -> None:
    printed = lazy("memory", "context", "--role", "agent")
    measured = json.loads(lazy("memory", "context", "--role", "agent", "--json").stdout)
    builder = json.loads(lazy("memory", "context", "--role", "builder", "--json").stdout)

    assert printed.stdout.startswith("# Project memory\n")
    assert f"- {records[0].name} ({records[0].type}):" in printed.stdout
    assert measured["text"] == printed.stdout
    assert measured["bytes"] == len(printed.stdout.encode("utf-8"))
    assert measured["warn_bytes"] == 4096
    assert measured["over_threshold"] is builder["over_threshold"] is True
    assert builder["text"].endswith("run `lazy doctor` to see why and what helps.)\n")


def test_auto_compaction_uses_the_model_and_repairs_what_it_omits(
    lazy: Lazy, records: list[Record], fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(lambda request: "Themes: " + ", ".join(names_in(request)[2:]))

    compacted = lazy("memory", "compact")

    assert compacted.returncode == 0, compacted.stderr
    lines = compacted.stdout.splitlines()
    assert lines[0] == (
        "Compacting 60 records with anthropic (claude-haiku-4-5), falling back to the "
        "mechanical generator if that fails; there is no compact yet."
    )
    omitted = sorted(record.name for record in records)[:2]
    assert lines[1].endswith(f"appended verbatim as index lines: {', '.join(omitted)}")
    assert lines[2].startswith("Wrote the anthropic compact of 60 records: launches inject ")
    (request,) = fake_anthropic.requests
    assert request.body["model"] == "claude-haiku-4-5"
    assert "MUST mention every record name" in request.prompt
    context = lazy("memory", "context", "--role", "agent").stdout
    assert all(record.name in context for record in records)


@pytest.mark.parametrize(
    ("environment", "reason"),
    [
        ({}, "no ANTHROPIC_API_KEY is set"),
        ({"LAZY_OFFLINE": "1"}, "LAZY_OFFLINE=1: no model calls"),
    ],
)
def test_auto_compaction_falls_back_to_mechanical_and_says_why(
    lazy: Lazy, records: list[Record], environment: dict[str, str], reason: str
) -> None:
    compacted = lazy("memory", "compact", environment=environment)

    assert compacted.returncode == 0, compacted.stderr
    assert f"Used the mechanical generator instead: {reason}" in compacted.stdout
    shown = json.loads(lazy("memory", "compact", "--show", "--json").stdout)
    assert shown["compact"]["generator"] == "mechanical"


def test_auto_compaction_falls_back_when_the_model_hangs(
    lazy: Lazy, records: list[Record], project: Path, fake_anthropic: FakeAnthropic
) -> None:
    (project / "lazy.toml").write_text("[compact]\ntimeout_seconds = 1\n")
    fake_anthropic.script(hang())

    compacted = lazy("memory", "compact")

    assert compacted.returncode == 0, compacted.stderr
    assert "Used the mechanical generator instead: the Anthropic API timed out" in (
        compacted.stdout
    )


def test_llm_compaction_fails_loudly_and_writes_nothing(
    lazy: Lazy, records: list[Record], fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(error(500, "overloaded"))

    failed = lazy("memory", "compact", "--llm")

    assert failed.returncode == 9
    assert failed.stderr.count("\n") == 1
    assert "the Anthropic API answered 500: overloaded" in failed.stderr
    assert json.loads(lazy("memory", "compact", "--show", "--json").stdout)["compact"] is None


def test_a_summary_longer_than_the_index_is_rejected_and_the_old_compact_kept(
    lazy: Lazy, records: list[Record], fake_anthropic: FakeAnthropic
) -> None:
    lazy("memory", "compact", "--mechanical")
    before = lazy("memory", "compact", "--show", "--json").stdout
    fake_anthropic.script(lambda request: request.prompt * 2)

    rejected = lazy("memory", "compact", "--llm")

    assert rejected.returncode == 8
    assert "bytes with it" in rejected.stderr
    assert "bytes injected now): nothing was written and the previous compact is kept" in (
        rejected.stderr
    )
    assert "What helps instead" in rejected.stderr
    assert lazy("memory", "compact", "--show", "--json").stdout == before


def test_the_mechanical_compact_auto_wrote_names_the_model_whose_summary_was_rejected(
    lazy: Lazy, records: list[Record], fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(lambda request: request.prompt * 2)

    compacted = lazy("memory", "compact")
    shown = lazy("memory", "compact", "--show").stdout
    as_json = json.loads(lazy("memory", "compact", "--show", "--json").stdout)

    assert compacted.returncode == 0, compacted.stderr
    assert "Used the mechanical generator instead: the model's summary would not shrink" in (
        compacted.stdout
    )
    assert (
        "with mechanical, as anthropic (claude-haiku-4-5)'s summary of these records was not "
        "accepted."
    ) in shown
    assert as_json["compact"]["model_rejected"] == "anthropic (claude-haiku-4-5)"


def test_a_command_summarizer_gets_the_prompt_on_stdin(
    lazy: Lazy, records: list[Record], project: Path
) -> None:
    script = project / "summarize.py"
    script.write_text(
        "import sys\n"
        "index = sys.stdin.read().split('The index (', 1)[1]\n"
        "names = [l[2:].split(' (')[0] for l in index.splitlines() if l.startswith('- ')]\n"
        "print('All of: ' + ', '.join(names))\n"
    )
    (project / "lazy.toml").write_text(f'[compact]\ncommand = "{sys.executable} {script}"\n')

    compacted = lazy("memory", "compact", "--llm")

    assert compacted.returncode == 0, compacted.stderr
    shown = json.loads(lazy("memory", "compact", "--show", "--json").stdout)
    assert shown["compact"]["generator"] == "command"
    assert shown["compact"]["summary"].startswith("All of: ")


def test_show_tells_what_is_newer_than_the_compact(lazy: Lazy, records: list[Record]) -> None:
    lazy("memory", "compact", "--mechanical")
    current = lazy("memory", "compact", "--show").stdout
    lazy("memory", "save", "after-the-compact", "-t", "project", "-d", "Saved later", "--body", "")
    lazy("memory", "rm", records[0].name)

    shown = lazy("memory", "compact", "--show").stdout

    assert "Nothing is outstanding: every record is covered at its current revision." in current
    assert "It covers 60 records." in shown
    assert "by human:" in shown
    assert (
        "Written or updated since the compact (1):\n- after-the-compact (project): Saved later"
        in (shown)
    )
    assert f"Removed since the compact (1):\n- {records[0].name}\n" in shown


def test_clear_brings_back_the_plain_index(lazy: Lazy, records: list[Record]) -> None:
    lazy("memory", "compact", "--mechanical")

    assert lazy("memory", "compact", "--clear").stdout == "Cleared the compact.\n"
    assert lazy("memory", "compact", "--clear").stdout == "There was no compact to clear.\n"
    assert lazy("memory", "compact", "--show").stdout.startswith("There is no compact")


def test_a_tiny_store_cannot_be_compacted(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    lazy("memory", "save", "only-one", "-t", "user", "-d", "The single record", "--body", "")

    rejected = lazy("memory", "compact", "--mechanical")

    assert rejected.returncode == 8
    assert rejected.stderr.startswith("lazy: error: the mechanical compact would not shrink")


async def test_doctor_names_the_remedy_in_its_exit_status(
    lazy: Lazy, records: list[Record], project: Path
) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 2000\n")

    first = lazy("doctor")
    lazy("memory", "compact", "--mechanical")
    current = lazy("doctor")
    lazy("memory", "rm", records[0].name)
    behind = json.loads(lazy("doctor", "--json").stdout)

    assert first.returncode == 10
    assert "Compact: none" in first.stdout
    assert "There is no compact: run `lazy memory compact`" in first.stdout
    assert current.returncode == 11
    assert "compacting again cannot help" in current.stdout
    assert behind["remedy"] == "compact"
    assert behind["removed_since_compact"] == [records[0].name]
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 100000\n")
    assert lazy("doctor").returncode == 0
