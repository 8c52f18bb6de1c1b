"""`lazy init --claude-code` and `--remove`, run as the real `lazy` command in a project.

Each test gets its own HOME and CLAUDE_CONFIG_DIR (no harness memory unless it writes some)
and its own LAZY_DATA; the command runs as `python -m lazy_memory.rpc.cli` unless a test runs
the installed `lazy` script to see how the files name it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.components import missing
from tests.e2e.conftest import Lazy

MODULE_WORDS = [sys.executable, "-m", "lazy_memory.rpc.cli"]
HOOK_COMMAND = shlex.join([*MODULE_WORDS, "memory", "context", "--hook"])
MATCHER = "startup|resume|clear|compact"


@pytest.fixture(autouse=True)
def harness_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code config dir of the test's own, so no real harness memory is read."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("PATH", _path_without("claude"))
    return config


def our_hook(command: str = HOOK_COMMAND) -> dict[str, Any]:
    return {
        "matcher": MATCHER,
        "hooks": [{"type": "command", "command": command, "timeout": 30}],
    }


def our_server(data_dir: Path, words: list[str] = MODULE_WORDS) -> dict[str, Any]:
    return {"command": words[0], "args": [*words[1:], "mcp"], "env": {"LAZY_DATA": str(data_dir)}}


def write_json(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot(*directories: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under the directories."""
    found: dict[str, bytes | None] = {}
    for directory in directories:
        for path in sorted(directory.rglob("*")) if directory.exists() else []:
            found[str(path)] = None if path.is_dir() else path.read_bytes()
    return found


def users_files(project: Path) -> dict[Path, dict[str, Any]]:
    """A project Claude Code already knows: the user's hooks, permissions and servers."""
    files: dict[Path, dict[str, Any]] = {
        project / ".claude" / "settings.json": {
            "permissions": {"allow": ["Bash(make test)"], "deny": ["Read(./.env)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
                ],
                "SessionStart": [
                    {"matcher": "startup", "hooks": [{"type": "command", "command": "hello.sh"}]}
                ],
            },
            "autoMemoryEnabled": True,
            "model": "opus",
        },
        project / ".claude" / "settings.local.json": {
            "permissions": {"allow": ["WebFetch"]},
            "enabledMcpjsonServers": ["github"],
        },
        project / ".mcp.json": {
            "mcpServers": {"github": {"command": "gh-mcp", "args": [], "env": {"T": "x"}}},
            "$schema": "keep me",
        },
    }
    for path, value in files.items():
        write_json(path, value)
    return files


def test_a_fresh_repository_gets_the_hook_the_server_and_its_approval(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    done = lazy("init", "--claude-code", "--non-interactive")

    assert done.returncode == 0, done.stderr
    settings = (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert settings == json.dumps({"hooks": {"SessionStart": [our_hook()]}}, indent=2) + "\n"
    assert read_json(project / ".mcp.json") == {
        "mcpServers": {"lazy": our_server(isolated_environment)}
    }
    assert read_json(project / ".claude" / "settings.local.json") == {
        "enabledMcpjsonServers": ["lazy"]
    }
    assert (project / "lazy.toml").exists()
    lines = done.stdout.splitlines()
    assert f"Added the SessionStart hook `{HOOK_COMMAND}` to .claude/settings.json." in lines
    assert any(line.startswith("Added the MCP server lazy (`") for line in lines)
    assert lines[-1].startswith("Check: `claude mcp list` lists lazy as connected")


def test_the_users_settings_hooks_and_servers_are_kept_as_they_were(
    lazy: Lazy, project: Path, isolated_environment: Path
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
    assert settings["autoMemoryEnabled"] is True  # explicit: never changed unasked
    assert settings["hooks"] == {
        "PreToolUse": theirs["hooks"]["PreToolUse"],
        "SessionStart": [*theirs["hooks"]["SessionStart"], our_hook()],
    }
    assert local == {**before[local_path], "enabledMcpjsonServers": ["github", "lazy"]}
    assert list(mcp) == ["mcpServers", "$schema"]
    assert mcp["mcpServers"] == {
        **before[mcp_path]["mcpServers"],
        "lazy": our_server(isolated_environment),
    }


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
    lazy: Lazy, project: Path, isolated_environment: Path
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
    off_path = run_script(_path_without("lazy"))

    assert on_path.returncode == 0, on_path.stderr
    assert "Updated the SessionStart hook in .claude/settings.json to `lazy memory" in (
        on_path.stdout
    )
    assert on_path_settings["hooks"]["SessionStart"][1:] == [our_hook("lazy memory context --hook")]
    assert on_path_server == our_server(isolated_environment, ["lazy"])
    assert off_path.returncode == 0, off_path.stderr
    session_start = read_json(project / ".claude" / "settings.json")["hooks"]["SessionStart"]
    assert session_start[1:] == [our_hook(shlex.join([str(script), "memory", "context", "--hook"]))]
    assert read_json(project / ".mcp.json")["mcpServers"]["lazy"] == our_server(
        isolated_environment, [str(script)]
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


def test_json_says_what_was_written(lazy: Lazy, project: Path, isolated_environment: Path) -> None:
    done = lazy("init", "--claude-code", "--json")

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {
        "root": str(project),
        "changed": True,
        "files": [
            {"path": str(project / "lazy.toml"), "status": "created"},
            {"path": str(isolated_environment / ".gitignore"), "status": "created"},
            {"path": str(project / ".claude" / "settings.json"), "status": "created"},
            {"path": str(project / ".claude" / "settings.local.json"), "status": "created"},
            {"path": str(project / ".mcp.json"), "status": "created"},
        ],
        "storage": {"backend": "sqlite", "project": str(project)},
        "import": {"found": 0, "imported": []},
        "hook": {
            "event": "SessionStart",
            "matcher": MATCHER,
            "command": HOOK_COMMAND,
            "timeout": 30,
            "status": "added",
        },
        "mcp_server": {
            "name": "lazy",
            **our_server(isolated_environment),
            "status": "added",
            "approval": "added",
        },
        "auto_memory": {"status": "not_asked", "turned_off": False},
        "hints": [
            "Claude Code's own auto memory is still on for this project; run `lazy init "
            "--claude-code --auto-memory-off` to turn it off."
        ],
        "warnings": [],
    }


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


def test_remove_and_auto_memory_off_need_claude_code(lazy: Lazy) -> None:
    for flag in ("--remove", "--auto-memory-off"):
        refused = lazy("init", flag)
        assert refused.returncode == 2
        assert f"{flag} goes with --claude-code" in refused.stderr
    assert lazy("init", "--yes", "--non-interactive").returncode == 2


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


def _path_without(program: str) -> str:
    """PATH less every folder that holds program."""
    return os.pathsep.join(
        folder
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if folder and not (Path(folder) / program).exists()
    )
