"""Doctor and compact speak of the harness: what a hook launch shows, what the last logged one
saw, and what the installed hook keeps from sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.corpus import fill_store
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from tests.e2e.compacting import themes
from tests.e2e.conftest import Lazy
from tests.support.fake_anthropic import FakeAnthropic


def fill(data_dir: Path, count: int) -> None:
    async def write() -> None:
        storage = await SqliteStorage.open(data_dir / "memory.db")
        try:
            await fill_store(storage, count)
        finally:
            await storage.aclose()

    asyncio.run(write())


def test_doctor_says_how_many_records_a_hook_launch_shows_and_what_helps(
    lazy: Lazy, isolated_environment: Path
) -> None:
    fill(isolated_environment, 300)

    printed = lazy("doctor")
    diagnosis = json.loads(lazy("doctor", "--json").stdout)

    hook = diagnosis["hook"]
    assert hook["records"] == 300
    assert 0 < hook["listed"] < 300
    assert hook["chars"] > hook["limit_chars"] == 10_000
    assert "lazy launch claude" in hook["advice"]
    assert "lazy_memory_recall()" in hook["advice"]
    assert f"Claude Code hook: A hook launch shows {hook['listed']:,} of 300 records" in (
        printed.stdout
    )


def test_with_a_model_doctor_offers_the_model_s_compact_for_the_hook_without_calling_it(
    lazy: Lazy, project: Path, isolated_environment: Path, fake_anthropic: FakeAnthropic
) -> None:
    # 300 records: the mechanical compact is smaller than the plain index but far over the
    # hook's limit; a model's summary of the themes fits it.
    fill(isolated_environment, 300)
    fake_anthropic.script(themes)

    with_a_model = json.loads(lazy("doctor", "--json").stdout)["hook"]["advice"]
    offline = json.loads(lazy("doctor", "--json", environment={"LAZY_OFFLINE": "1"}).stdout)
    # The model's name is the configuration's text, shown as any other text is.
    (project / "lazy.toml").write_text('[compact]\nmodel = "haiku\\u001b[2J"\n')
    hostile = lazy("doctor").stdout
    (project / "lazy.toml").unlink()
    doctor_asked = len(fake_anthropic.requests)
    compacted = lazy("memory", "compact")
    after = json.loads(lazy("doctor", "--json").stdout)["hook"]

    assert doctor_asked == 0, "doctor called the model"
    assert (
        "try `lazy memory compact`: anthropic (claude-haiku-4-5)'s summary may fit it (doctor "
        "cannot know without calling the model; a rejected compact writes nothing)"
    ) in with_a_model
    assert "try `lazy memory compact`" not in offline["hook"]["advice"]
    assert "\x1b" not in hostile
    assert "try `lazy memory compact`: anthropic (haiku\\x1b[2J)'s summary may fit it" in hostile
    assert offline["no_model_reason"] == "LAZY_OFFLINE=1: no model calls"
    assert compacted.returncode == 0, compacted.stderr
    assert "It fits Claude Code's hook limit" in compacted.stdout
    assert "the whole section fits" in after["advice"]


def test_doctor_on_a_small_store_says_the_whole_section_fits(lazy: Lazy) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    hook = json.loads(lazy("doctor", "--json").stdout)["hook"]

    assert (hook["listed"], hook["records"]) == (1, 1)
    assert "the whole section fits" in hook["advice"]


def test_doctor_tells_whether_the_newest_record_reached_the_last_launch(lazy: Lazy) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    never = lazy("doctor").stdout
    lazy("memory", "context", "--hook")
    reached = lazy("doctor").stdout
    lazy("memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "b")
    after = lazy("doctor").stdout
    last = json.loads(lazy("doctor", "--json").stdout)["last_launch"]

    assert "Last logged launch: none yet." in never
    assert "Not logged: launches by agents, launches on a store that cannot be written" in never
    assert "the newest record, deploy (revision 1), reached it, listed inline" in reached
    assert "the newest record, style (revision 1), was written after it" in after
    assert (last["channel"], last["role"], last["listed"]) == ("hook", "builder", 1)


def test_doctor_says_when_the_last_launch_got_the_marker_and_why(
    lazy: Lazy, isolated_environment: Path
) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    store = isolated_environment / "memory.db"
    readable = store.read_bytes()
    store.write_bytes(b"not a database" * 100)  # for the launch only: doctor reads it again
    hooked = lazy("memory", "context", "--hook")
    store.write_bytes(readable)

    said = lazy("doctor").stdout

    assert hooked.stdout.startswith("MEMORY INDEX UNAVAILABLE (")
    assert "; the store could not be read (" in said
    assert "), so the session got MEMORY INDEX UNAVAILABLE." in said


LEGACY_GROUP = {
    "matcher": "startup|resume|clear|compact",
    "hooks": [{"type": "command", "command": "lazy memory context --hook", "timeout": 30}],
}


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"model": "opus"}, "Claude Code hook: none in .claude/settings.json, so a session"),
        (
            {"hooks": {"SessionStart": [LEGACY_GROUP]}},
            "Claude Code hook: lazy's has the matcher 'startup|resume|clear|compact', so",
        ),
        (
            {"hooks": {"SessionStart": [{"hooks": LEGACY_GROUP["hooks"]}]}},
            "Claude Code hook: an older lazy's command, which prints nothing at all",
        ),
        ("{not json", "is not valid JSON"),
    ],
)
def test_doctor_names_what_keeps_the_installed_hook_from_sessions(
    lazy: Lazy, project: Path, settings: Any, said: str
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(settings if isinstance(settings, str) else json.dumps(settings))

    printed = lazy("doctor")

    assert printed.returncode == 0, printed.stderr
    assert said in printed.stdout


def test_doctor_is_quiet_about_a_current_hook_and_where_claude_code_is_not_set_up(
    lazy: Lazy, project: Path
) -> None:
    nowhere = lazy("doctor")
    lazy("init", "--claude-code", "--yes")
    current = lazy("doctor")
    installed = json.loads(lazy("doctor", "--json").stdout)["installed_hook"]

    assert "Claude Code hook: none" not in nowhere.stdout
    assert json.loads(lazy("doctor", "--json").stdout)["installed_hook"] == installed
    assert installed == {
        "found": True,
        "missing_matcher": None,
        "falls_back": True,
        "error": None,
    }
    assert "Claude Code hook: none" not in current.stdout
    assert "matcher" not in current.stdout


def test_compact_says_whether_its_result_fits_the_hook(
    lazy: Lazy, isolated_environment: Path
) -> None:
    fill(isolated_environment, 60)

    fits = lazy("memory", "compact", "--mechanical")
    fill(isolated_environment, 300)
    over = lazy("memory", "compact", "--mechanical", "--json")

    assert fits.returncode == 0, fits.stderr
    assert "It fits Claude Code's hook limit" in fits.stdout
    assert over.returncode == 0, over.stderr
    assert json.loads(over.stdout)["hook"]["fits"] is False
