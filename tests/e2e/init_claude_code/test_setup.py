"""`lazy init --claude-code` setting a project up, run as the real `lazy` command in it: a fresh
repository, one whose settings, hooks and servers are kept, a second run, a moved `lazy`,
and the --json report.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (conftest.py's harness_home) and its own
LAZY_DATA; the command runs as `python -m lazy_memory.rpc.cli` unless a test runs the
installed `lazy` script to see how the files name it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import (
    HOOK_COMMAND,
    command_of,
    our_hook,
    our_server,
    path_without,
    read_json,
    snapshot,
    users_files,
)
from tests.support.components import missing


def test_a_fresh_repository_gets_the_hook_the_server_and_auto_memory_off(
    lazy: Lazy, project: Path
) -> None:
    done = lazy("init", "--claude-code", "--non-interactive")

    assert done.returncode == 0, done.stderr
    settings = (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert settings == (
        json.dumps({"hooks": {"SessionStart": [our_hook()]}, "autoMemoryEnabled": False}, indent=2)
        + "\n"
    )
    assert read_json(project / ".mcp.json") == {"mcpServers": {"lazy": our_server()}}
    assert read_json(project / ".claude" / "settings.local.json") == {
        "enabledMcpjsonServers": ["lazy"]
    }
    assert (project / ".claude" / ".gitignore").read_text() == "/settings.local.json\n"
    assert (project / "lazy.toml").exists()
    lines = done.stdout.splitlines()
    assert "Added lazy's SessionStart hook to .claude/settings.json (every source)." in lines
    assert "Added the MCP server lazy (`" in done.stdout
    assert lines[-2].startswith("Check: `claude mcp list` lists lazy as connected")
    assert lines[-1] == (
        "Commit lazy.toml, .claude/settings.json, .mcp.json and .claude/.gitignore."
    )


def test_the_users_settings_hooks_and_servers_are_kept_as_they_were(
    lazy: Lazy, project: Path
) -> None:
    before = users_files(project)

    done = lazy("init", "--claude-code", "--non-interactive")

    assert done.returncode == 0, done.stderr
    settings_path, local_path, mcp_path = before
    settings, local, mcp = (read_json(path) for path in before)
    theirs = before[settings_path]
    assert list(settings) == list(theirs)
    assert {key: settings[key] for key in ("permissions", "model")} == {
        key: theirs[key] for key in ("permissions", "model")
    }
    assert settings["autoMemoryEnabled"] is False  # the user's true, turned off where it stood
    assert settings["hooks"] == {
        "PreToolUse": theirs["hooks"]["PreToolUse"],
        "SessionStart": [*theirs["hooks"]["SessionStart"], our_hook()],
    }
    assert local == {**before[local_path], "enabledMcpjsonServers": ["github", "lazy"]}
    assert list(mcp) == ["mcpServers", "$schema"]
    assert mcp["mcpServers"] == {**before[mcp_path]["mcpServers"], "lazy": our_server()}


def test_a_second_run_changes_nothing_and_says_so(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    users_files(project)
    lazy("init", "--claude-code", "--yes")
    first = snapshot(project, isolated_environment)

    again = lazy("init", "--claude-code", "--yes")
    reported = json.loads(lazy("init", "--claude-code", "--yes", "--json").stdout)

    assert again.returncode == 0, again.stderr
    assert "Claude Code is already set up for this repository; nothing changed." in again.stdout
    assert "Added" not in again.stdout
    assert snapshot(project, isolated_environment) == first
    assert reported["changed"] is False
    assert {entry["status"] for entry in reported["files"]} == {"unchanged"}


def test_a_changed_lazy_path_updates_the_entries_instead_of_adding_more(
    lazy: Lazy, project: Path
) -> None:
    script = Path(sys.executable).with_name("lazy")
    if not script.exists():
        missing("the installed lazy script", f"none beside {sys.executable} (pip install -e .)")
    users_files(project)
    lazy("init", "--claude-code", "--non-interactive")

    def run_script(path: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), "init", "--claude-code", "--non-interactive"],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "PATH": path},
            timeout=60,
        )

    on_path = run_script(f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    on_path_settings = read_json(project / ".claude" / "settings.json")
    on_path_server = read_json(project / ".mcp.json")["mcpServers"]["lazy"]
    off_path = run_script(path_without("lazy"))

    assert on_path.returncode == 0, on_path.stderr
    assert "Updated lazy's SessionStart hook in .claude/settings.json" in on_path.stdout
    assert on_path_settings["hooks"]["SessionStart"][1:] == [our_hook(command_of(["lazy"]))]
    assert on_path_server == our_server(["lazy"])
    assert "a path of this machine" not in on_path.stderr
    assert off_path.returncode == 0, off_path.stderr
    session_start = read_json(project / ".claude" / "settings.json")["hooks"]["SessionStart"]
    assert session_start[1:] == [our_hook(command_of([str(script)]))]
    assert read_json(project / ".mcp.json")["mcpServers"]["lazy"] == our_server([str(script)])
    # An absolute path is this machine's: committed, it would fail on a teammate's.
    assert f"start lazy as `{script}`, a path of this machine" in off_path.stderr


def test_json_says_what_was_written(lazy: Lazy, project: Path, isolated_environment: Path) -> None:
    done = lazy("init", "--claude-code", "--json")

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["hints"][0].startswith("lazy.toml names no [storage] project")
    claude = project / ".claude"
    assert report == {
        "root": str(project),
        "changed": True,
        "files": [
            {"path": str(project / "lazy.toml"), "status": "created"},
            {"path": str(isolated_environment / ".gitignore"), "status": "created"},
            {"path": str(claude / "settings.json"), "status": "created"},
            {"path": str(claude / "settings.local.json"), "status": "created"},
            {"path": str(project / ".mcp.json"), "status": "created"},
            {"path": str(claude / ".gitignore"), "status": "created"},
        ],
        # The project (a bare .git) has no remote: its path is no key (test_init_options.py).
        "storage": {"backend": "sqlite", "project": None, "records": 0},
        "import": {"found": 0, "imported": []},
        "hook": {
            "event": "SessionStart",
            "command": HOOK_COMMAND,
            "timeout": 30,
            "status": "added",
        },
        "mcp_server": {"name": "lazy", **our_server(), "status": "added", "approval": "added"},
        "auto_memory": {"status": "turned_off", "off": True},
        "ignore": {
            "path": ".claude/settings.local.json",
            "status": "added",
            "by": ".claude/.gitignore",
        },
        "commit": ["lazy.toml", ".claude/settings.json", ".mcp.json", ".claude/.gitignore"],
        "hints": [report["hints"][0]],
        "warnings": [
            # The tests run lazy as `python -m`: a path of this machine.
            f"the hook and the MCP server start lazy as `{sys.executable} -m "
            "lazy_memory.rpc.cli`, a path of this machine: before committing them, put lazy "
            "on the PATH (pipx install lazy-memory, or activate its environment) and run "
            "this again to write `lazy`."
        ],
    }
