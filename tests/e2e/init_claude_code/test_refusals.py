"""What `lazy init` refuses, run as the real `lazy` command in a project: a settings file that is
not JSON, a hooks table of the wrong type and an agent, each before anything is written, and
--remove or the auto memory flags without --claude-code.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import snapshot, users_files, write_json


@pytest.mark.parametrize(
    "name", [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"]
)
def test_a_file_that_is_not_json_is_refused_and_nothing_is_written(
    lazy: Lazy, project: Path, isolated_environment: Path, name: str
) -> None:
    broken = project / name
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text('{"hooks": {', encoding="utf-8")
    before = snapshot(project, isolated_environment)

    refused = lazy("init", "--claude-code", "--yes")

    assert refused.returncode == 4
    assert refused.stderr.count("\n") == 1
    assert f"{broken} is not valid JSON" in refused.stderr
    assert snapshot(project, isolated_environment) == before


def test_a_hooks_table_of_the_wrong_type_is_refused_by_file_and_key(
    lazy: Lazy, project: Path
) -> None:
    write_json(project / ".claude" / "settings.json", {"hooks": ["not", "an", "object"]})

    refused = lazy("init", "--claude-code", "--non-interactive")

    assert refused.returncode == 4
    assert "settings.json: `hooks` is not a JSON object; left as it is" in refused.stderr
    assert not (project / "lazy.toml").exists()


@pytest.mark.parametrize("task_id", ["", "t-42"])
@pytest.mark.parametrize("flags", [["--claude-code", "--yes"], ["--claude-code", "--remove"], []])
def test_an_agent_is_refused_before_anything_is_written(
    lazy: Lazy, project: Path, isolated_environment: Path, task_id: str, flags: list[str]
) -> None:
    users_files(project)
    before = snapshot(project, isolated_environment)

    refused = lazy("init", *flags, environment={"LAZY_TASK_ID": task_id})

    assert refused.returncode == 6
    assert "agent session (LAZY_TASK_ID is set)" in refused.stderr
    assert snapshot(project, isolated_environment) == before


def test_remove_and_the_auto_memory_flags_need_claude_code(lazy: Lazy) -> None:
    for flag in ("--remove", "--keep-auto-memory", "--auto-memory-off"):
        refused = lazy("init", flag)
        assert refused.returncode == 2
        assert f"{flag} goes with --claude-code" in refused.stderr
    assert lazy("init", "--yes", "--non-interactive").returncode == 2
    both = lazy("init", "--claude-code", "--keep-auto-memory", "--auto-memory-off")
    assert both.returncode == 2
    undone = lazy("init", "--claude-code", "--remove", "--keep-auto-memory")
    assert undone.returncode == 2
    assert "--remove puts autoMemoryEnabled back as it was: give it alone" in undone.stderr
