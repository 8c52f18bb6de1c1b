"""What `lazy init` offers, run as the real `lazy` command in a project: importing the harness's
memory and turning Claude Code's auto memory off (asked in a terminal, done with --yes, only
printed with --non-interactive), and plain `lazy init` offering the Claude Code set-up.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA; a test that needs a terminal runs the command under util-linux `script`.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import (
    MODULE_WORDS,
    our_hook,
    read_json,
    users_files,
)


def test_non_interactive_makes_no_offer_and_prints_the_commands_instead(
    lazy: Lazy, project: Path, harness_home: Path
) -> None:
    _harness_memory(harness_home, project)

    done = lazy("init", "--claude-code", "--non-interactive")

    assert done.returncode == 0, done.stderr
    assert "Found 1 record(s) in the harness's memory files; run `lazy doctor --import-memory`" in (
        done.stdout
    )
    assert "run `lazy init --claude-code --auto-memory-off` to turn it off." in done.stdout
    assert "autoMemoryEnabled" not in read_json(project / ".claude" / "settings.json")
    assert json.loads(lazy("memory", "list", "--json").stdout) == []


def test_yes_imports_and_turns_auto_memory_off_even_where_the_user_had_it_on(
    lazy: Lazy, project: Path, harness_home: Path
) -> None:
    users_files(project)
    _harness_memory(harness_home, project)

    done = lazy("init", "--claude-code", "--yes", "--json")
    flag_only = lazy("init", "--claude-code", "--auto-memory-off", "--json")

    report = json.loads(done.stdout)
    assert report["import"] == {"found": 1, "imported": ["deploy-steps"]}
    assert report["auto_memory"] == {"status": "turned_off", "turned_off": True}
    settings = read_json(project / ".claude" / "settings.json")
    assert settings["autoMemoryEnabled"] is False
    assert list(settings)[2] == "autoMemoryEnabled"  # the user's key, changed where it stood
    assert json.loads(flag_only.stdout)["auto_memory"]["status"] == "already_off"


def test_in_a_terminal_the_auto_memory_offer_is_a_question(
    project: Path, isolated_environment: Path
) -> None:
    yes = _in_a_terminal(project, ["init", "--claude-code"], "y\n")
    assert "Turn Claude Code's own auto memory off for this project?" in yes.stdout
    assert "[y/N]" in yes.stdout
    assert read_json(project / ".claude" / "settings.json")["autoMemoryEnabled"] is False

    (project / ".claude" / "settings.json").unlink()
    no = _in_a_terminal(project, ["init", "--claude-code"], "n\n")
    assert "Claude Code's auto memory stays on" in no.stdout
    assert "autoMemoryEnabled" not in read_json(project / ".claude" / "settings.json")


def test_plain_init_offers_the_set_up_where_claude_code_is_in_use(
    lazy: Lazy, project: Path
) -> None:
    nowhere = lazy("init", "--non-interactive")
    (project / ".claude").mkdir()
    hinted = lazy("init", "--non-interactive")
    asked = _in_a_terminal(project, ["init"], "y\nn\n")

    assert "--claude-code" not in nowhere.stdout
    assert "Claude Code: run `lazy init --claude-code` to give Claude Code sessions" in (
        hinted.stdout
    )
    assert "Set this repository up for Claude Code too" in asked.stdout
    assert "Turn Claude Code's own auto memory off" in asked.stdout
    assert read_json(project / ".claude" / "settings.json") == {
        "hooks": {"SessionStart": [our_hook()]}
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
