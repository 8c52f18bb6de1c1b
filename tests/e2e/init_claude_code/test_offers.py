"""What `lazy init` offers and what it does unasked, run as the real `lazy` command in a project:
Claude Code's own auto memory turned off in every mode unless `--keep-auto-memory` (and put
back exactly by `--remove`), the import of the harness's memory (asked in a terminal, done with
--yes, only printed with --non-interactive), and plain `lazy init` offering the set-up.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA; a test that needs a terminal runs the command under util-linux `script`.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import (
    MODULE_WORDS,
    our_hook,
    read_json,
    users_files,
)

MODES = {
    "yes": ["--yes"],
    "non-interactive": ["--non-interactive"],
    "no terminal": [],
    "a terminal": ["(terminal)"],
}
"""How init is run: answering yes, making no offer, with no terminal, or asking in one."""
PREVIOUS = {"absent": None, "true": True, "false": False}
"""autoMemoryEnabled in the user's settings before init (None: no such key)."""


def run_init(lazy: Lazy, project: Path, flags: list[str]) -> subprocess.CompletedProcess[str]:
    if flags == ["(terminal)"]:
        return _in_a_terminal(project, ["init", "--claude-code"], "")
    return lazy("init", "--claude-code", *flags)


@pytest.mark.parametrize("previous", PREVIOUS)
@pytest.mark.parametrize("mode", MODES)
def test_auto_memory_is_turned_off_in_every_mode_and_remove_puts_it_back_exactly(
    lazy: Lazy, project: Path, mode: str, previous: str
) -> None:
    path = project / ".claude" / "settings.json"
    settings: dict[str, Any] = {"model": "opus"}
    if PREVIOUS[previous] is not None:
        settings["autoMemoryEnabled"] = PREVIOUS[previous]
    path.parent.mkdir()
    path.write_text(json.dumps(settings, indent=4), encoding="utf-8")
    original = path.read_bytes()

    done = run_init(lazy, project, MODES[mode])
    after = read_json(path)
    removed = lazy("init", "--claude-code", "--remove")

    assert done.returncode == 0, done.stderr
    assert after["autoMemoryEnabled"] is False
    assert "Turn Claude Code's own auto memory off" not in done.stdout  # never a question
    assert ("Turned Claude Code's own auto memory off" in done.stdout) == (previous != "false")
    assert removed.returncode == 0, removed.stderr
    assert path.read_bytes() == original


def test_keep_auto_memory_leaves_it_as_it_is_and_puts_back_what_an_earlier_run_changed(
    lazy: Lazy, project: Path
) -> None:
    users_files(project)  # autoMemoryEnabled: true
    path = project / ".claude" / "settings.json"

    kept = lazy("init", "--claude-code", "--keep-auto-memory", "--json")
    lazy("init", "--claude-code", "--yes")
    turned_off = read_json(path)["autoMemoryEnabled"]
    kept_again = lazy("init", "--claude-code", "--keep-auto-memory", "--json")

    assert json.loads(kept.stdout)["auto_memory"] == {"status": "kept", "off": False}
    assert turned_off is False
    assert json.loads(kept_again.stdout)["auto_memory"] == {"status": "restored", "off": False}
    assert read_json(path)["autoMemoryEnabled"] is True
    assert list(read_json(path))[2] == "autoMemoryEnabled"  # where the user had it


def test_a_true_in_the_local_settings_is_named_it_would_bring_the_second_instruction_back(
    lazy: Lazy, project: Path
) -> None:
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"autoMemoryEnabled": true}', encoding="utf-8")

    done = lazy("init", "--claude-code", "--yes")

    assert done.returncode == 0, done.stderr
    assert "settings.local.json sets autoMemoryEnabled: true, which overrides" in done.stderr
    assert read_json(local)["autoMemoryEnabled"] is True  # the user's own file, left as is


def test_non_interactive_makes_no_import_offer_and_prints_the_command_instead(
    lazy: Lazy, project: Path, harness_home: Path
) -> None:
    _harness_memory(harness_home, project)

    done = lazy("init", "--claude-code", "--non-interactive")

    assert done.returncode == 0, done.stderr
    assert "Found 1 record in the harness's memory files; run `lazy doctor --import-memory`" in (
        done.stdout
    )
    assert json.loads(lazy("memory", "list", "--json").stdout) == []


def test_yes_imports_the_harness_memory(lazy: Lazy, project: Path, harness_home: Path) -> None:
    _harness_memory(harness_home, project)

    done = lazy("init", "--claude-code", "--yes", "--json")

    assert json.loads(done.stdout)["import"] == {"found": 1, "imported": ["deploy-steps"]}


def test_in_a_terminal_the_import_is_a_question_and_auto_memory_is_not(
    project: Path, harness_home: Path
) -> None:
    _harness_memory(harness_home, project)

    asked = _in_a_terminal(project, ["init", "--claude-code"], "n\n")

    assert "Import this record now? [y/N]" in asked.stdout
    assert asked.stdout.count("[y/N]") == 1
    assert "Turned Claude Code's own auto memory off" in asked.stdout
    assert read_json(project / ".claude" / "settings.json")["autoMemoryEnabled"] is False


def test_plain_init_offers_the_set_up_where_claude_code_is_in_use(
    lazy: Lazy, project: Path
) -> None:
    nowhere = lazy("init", "--non-interactive")
    (project / ".claude").mkdir()
    hinted = lazy("init", "--non-interactive")
    asked = _in_a_terminal(project, ["init"], "y\n")

    assert "--claude-code" not in nowhere.stdout
    assert "Claude Code: run `lazy init --claude-code` to give Claude Code sessions" in (
        hinted.stdout
    )
    assert "Set this repository up for Claude Code too" in asked.stdout
    assert read_json(project / ".claude" / "settings.json") == {
        "hooks": {"SessionStart": [our_hook()]},
        "autoMemoryEnabled": False,
    }
    again = _in_a_terminal(project, ["init"], "")
    assert "Set this repository up" not in again.stdout  # set up already: no offer


def _in_a_terminal(
    project: Path, arguments: list[str], answers: str
) -> subprocess.CompletedProcess[str]:
    """Run lazy with a terminal for standard input (util-linux `script`), answering questions."""
    return subprocess.run(
        ["script", "-qec", shlex.join([*MODULE_WORDS, *arguments]), "/dev/null"],
        cwd=project,
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _harness_memory(config: Path, project: Path) -> None:
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    memory = config / "projects" / slug / "memory"
    memory.mkdir(parents=True)
    (memory / "deploy.md").write_text(
        "---\nname: deploy-steps\ndescription: How we deploy\ntype: project\n---\nmake deploy\n",
        encoding="utf-8",
    )
