"""`lazy init --claude-code --remove`, run as the real `lazy` command in a project: it restores
the exact original files, deletes what the set-up created, and without its note takes out only
what is recognisably lazy's.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import read_json, users_files


def test_remove_restores_the_exact_original_files(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    before = users_files(project)
    original = {path: path.read_bytes() for path in before}
    lazy("init", "--claude-code", "--yes")
    assert read_json(project / ".claude" / "settings.json")["autoMemoryEnabled"] is False

    removed = lazy("init", "--claude-code", "--remove")

    assert removed.returncode == 0, removed.stderr
    assert {path: path.read_bytes() for path in before} == original
    assert "Put autoMemoryEnabled back as it was before lazy in .claude/settings.json." in (
        removed.stdout
    )
    assert not (isolated_environment / "claude-code-setup.json").exists()


def test_remove_in_a_fresh_repository_deletes_what_the_set_up_created(
    lazy: Lazy, project: Path
) -> None:
    lazy("init", "--claude-code", "--yes")
    assert (project / ".claude").is_dir()

    removed = lazy("init", "--claude-code", "--remove", "--json")
    again = lazy("init", "--claude-code", "--remove")

    assert removed.returncode == 0, removed.stderr
    assert sorted(path.name for path in project.iterdir()) == [".git", "lazy.toml"]
    report = json.loads(removed.stdout)
    assert report["removed"] == {
        "hook": "removed",
        "mcp_server": "removed",
        "approval": "removed",
        "auto_memory": "restored",
    }
    assert {Path(entry["path"]).name: entry["status"] for entry in report["files"]} == {
        "settings.json": "deleted",
        "settings.local.json": "deleted",
        ".mcp.json": "deleted",
        ".claude": "deleted",
    }
    assert again.returncode == 0
    assert "lazy's Claude Code set-up is not in this repository; nothing to remove." in (
        again.stdout
    )


def test_remove_without_a_note_takes_out_only_what_is_recognisably_lazys(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    lazy("init", "--claude-code", "--yes")
    (isolated_environment / "claude-code-setup.json").unlink()

    removed = lazy("init", "--claude-code", "--remove")

    assert removed.returncode == 0, removed.stderr
    assert read_json(project / ".claude" / "settings.json") == {"autoMemoryEnabled": False}
    assert read_json(project / ".mcp.json") == {}
    assert read_json(project / ".claude" / "settings.local.json") == {
        "enabledMcpjsonServers": ["lazy"]
    }
    assert "autoMemoryEnabled: false in .claude/settings.json is left as it is" in removed.stderr
