"""`lazy init --claude-code --remove`, run as the real `lazy` command in a project: it restores
the exact original files, deletes what the set-up created, keeps what the user changed since,
upgrades and then undoes an older lazy's set-up, and without its note takes out only what is
recognisably lazy's.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import (
    MODULE_WORDS,
    our_hook,
    our_server,
    read_json,
    users_files,
    write_json,
)


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
        ".gitignore": "deleted",
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
    assert (project / ".claude" / ".gitignore").exists()
    assert "autoMemoryEnabled: false in .claude/settings.json is left as it is" in removed.stderr


def test_a_file_changed_after_init_loses_only_lazys_entries(lazy: Lazy, project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{\n    "model": "opus",\n    "autoMemoryEnabled": true\n}\n'
    settings.write_text(original, encoding="utf-8")
    lazy("init", "--claude-code", "--yes")
    written = settings.read_text(encoding="utf-8")
    settings.write_text(written.replace('"opus"', '"sonnet"'), encoding="utf-8")

    removed = lazy("init", "--claude-code", "--remove")

    assert removed.returncode == 0, removed.stderr
    assert settings.read_text(encoding="utf-8") == original.replace('"opus"', '"sonnet"')
    assert ".claude/settings.json was changed after lazy wrote it" in removed.stderr


def test_an_older_set_up_is_brought_up_to_date_and_then_taken_out(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    """What lazy wrote before: a matcher that misses fork, the store's path pinned on the
    server, files rewritten whole, and a note without the files' original texts."""
    users = users_files(project)
    settings, local, mcp = users
    older_hook = {
        "matcher": "startup|resume|clear|compact",
        "hooks": [
            {
                "type": "command",
                "command": shlex.join([*MODULE_WORDS, "memory", "context", "--hook"]),
                "timeout": 30,
            }
        ],
    }
    older: dict[str, dict[str, Any]] = json.loads(json.dumps({str(k): v for k, v in users.items()}))
    older[str(settings)]["hooks"]["SessionStart"].append(older_hook)
    older[str(local)]["enabledMcpjsonServers"].append("lazy")
    older[str(mcp)]["mcpServers"]["lazy"] = {
        "command": MODULE_WORDS[0],
        "args": [*MODULE_WORDS[1:], "mcp"],
        "env": {"LAZY_DATA": str(isolated_environment)},
    }
    for path, value in older.items():
        write_json(Path(path), value)
    write_json(
        isolated_environment / "claude-code-setup.json",
        {"version": 1, "projects": {str(project): {"approval": True, "server": True}}},
    )

    updated = lazy("init", "--claude-code", "--yes")
    now = {path: read_json(path) for path in users}
    removed = lazy("init", "--claude-code", "--remove")

    assert updated.returncode == 0, updated.stderr
    assert "Updated lazy's SessionStart hook in .claude/settings.json" in updated.stdout
    assert now[settings]["hooks"]["SessionStart"] == [
        *users[settings]["hooks"]["SessionStart"],
        our_hook(),
    ]
    assert now[mcp]["mcpServers"]["lazy"] == our_server()
    assert now[local]["enabledMcpjsonServers"] == ["github", "lazy"]
    assert removed.returncode == 0, removed.stderr
    assert {path: read_json(path) for path in users} == users
