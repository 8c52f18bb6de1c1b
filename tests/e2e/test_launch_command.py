"""`lazy launch claude`: the whole section in the system prompt, role and task id in the env.

A stand-in `claude` records what it was started with; the real Claude Code runs the same
launcher in tests/e2e/claude_code.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Lazy

STAND_IN = """\
import json, os, sys
prompt = sys.argv[sys.argv.index("--append-system-prompt-file") + 1]
with open(os.environ["RECORD_TO"], "w") as out:
    json.dump({"argv": sys.argv[1:], "env": dict(os.environ),
               "prompt_file": prompt, "prompt": open(prompt).read()}, out)
sys.exit(int(os.environ.get("EXIT_WITH", "0")))
"""


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    """An executable that stands in for claude and records its arguments and environment."""
    script = tmp_path / "claude"
    script.write_text(f"#!{sys.executable}\n{STAND_IN}", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def launch(
    lazy: Lazy, claude: Path, tmp_path: Path, *arguments: str, **environment: str
) -> tuple[int, dict[str, Any], str]:
    record = tmp_path / "started.json"
    result = lazy(
        "launch",
        "claude",
        "--claude",
        str(claude),
        *arguments,
        environment={"RECORD_TO": str(record), **environment},
    )
    started = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    return result.returncode, started, result.stderr


@pytest.fixture
def saved(lazy: Lazy) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    lazy("memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "b")


@pytest.mark.usefixtures("saved")
def test_a_builder_gets_the_whole_section_and_every_argument(
    lazy: Lazy, claude: Path, tmp_path: Path
) -> None:
    status, started, _ = launch(lazy, claude, tmp_path, "--", "-p", "do the thing", "--verbose")

    assert status == 0
    assert started["prompt"] == lazy("memory", "context", "--role", "builder").stdout
    argv = started["argv"]
    assert argv[:1] == ["--append-system-prompt-file"]
    assert argv[2].startswith("--mcp-config=")
    assert argv[3:] == ["-p", "do the thing", "--verbose"]
    environment = started["env"]
    assert environment["LAZY_LAUNCHED"] == "1"
    assert environment["LAZY_ROLE"] == "builder"
    assert environment["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] == "1"
    # alwaysLoad waits for lazy's server alone; this would hold the session for every server.
    assert "MCP_CONNECTION_NONBLOCKING" not in environment
    assert "LAZY_TASK_ID" not in environment
    assert not Path(started["prompt_file"]).exists(), "the prompt file goes with the session"


@pytest.mark.usefixtures("saved")
def test_an_agent_gets_the_agent_section_and_its_task_id(
    lazy: Lazy, claude: Path, tmp_path: Path
) -> None:
    status, started, _ = launch(lazy, claude, tmp_path, "--task-id", "task-9", "--", "-p", "x")

    assert status == 0
    assert started["env"]["LAZY_TASK_ID"] == "task-9"
    assert started["env"]["LAZY_ROLE"] == "agent"
    assert started["prompt"] == lazy("memory", "context", "--role", "agent").stdout


def mcp_config(started: dict[str, Any]) -> dict[str, Any] | None:
    """The servers the launch passed with --mcp-config=JSON, None if it passed none."""
    given = [word for word in started["argv"] if word.startswith("--mcp-config")]
    if not given:
        return None
    [word] = given
    config: dict[str, Any] = json.loads(word.removeprefix("--mcp-config="))
    return config


def test_without_a_set_up_the_launch_passes_lazys_server_always_loaded(
    lazy: Lazy, claude: Path, tmp_path: Path
) -> None:
    status, started, _ = launch(lazy, claude, tmp_path, "--", "fix the flaky test")

    assert status == 0
    assert mcp_config(started) == {
        "mcpServers": {
            "lazy": {
                "command": sys.executable,
                "args": ["-m", "lazy_memory.rpc.cli", "mcp"],
                "alwaysLoad": True,
            }
        }
    }
    # One argument: the option takes several values and would read the prompt as one.
    assert started["argv"][-1] == "fix the flaky test"


def test_a_project_set_up_by_init_gets_no_second_server(
    lazy: Lazy, claude: Path, tmp_path: Path, project: Path
) -> None:
    assert lazy("init", "--claude-code", "--yes").returncode == 0

    status, started, _ = launch(lazy, claude, tmp_path, "--", "-p", "x")
    strict = launch(lazy, claude, tmp_path, "--", "--strict-mcp-config", "-p", "x")[1]

    assert status == 0
    assert mcp_config(started) is None
    # Told to ignore .mcp.json, claude gets lazy's server from the launch.
    assert mcp_config(strict) == json.loads((project / ".mcp.json").read_text())


def test_an_older_set_up_is_passed_with_always_load_under_its_own_name(
    lazy: Lazy, claude: Path, tmp_path: Path, project: Path
) -> None:
    older = {"command": "lazy", "args": ["mcp"], "env": {"LAZY_DATA": "/somewhere/.lazy"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"lazy": older}}))

    _, started, _ = launch(lazy, claude, tmp_path, "--", "-p", "x")

    # The same name: Claude Code starts this one in place of the project's (one server).
    assert mcp_config(started) == {"mcpServers": {"lazy": {**older, "alwaysLoad": True}}}


def test_claudes_exit_status_is_the_launchers(lazy: Lazy, claude: Path, tmp_path: Path) -> None:
    status, _, _ = launch(lazy, claude, tmp_path, EXIT_WITH="3")

    assert status == 3


def test_an_unreadable_store_still_starts_the_session_with_the_marker(
    lazy: Lazy, claude: Path, tmp_path: Path, isolated_environment: Path
) -> None:
    isolated_environment.mkdir(parents=True)
    (isolated_environment / "memory.db").write_bytes(b"garbage" * 1000)

    status, started, stderr = launch(lazy, claude, tmp_path)

    assert status == 0
    assert started["prompt"].startswith("MEMORY INDEX UNAVAILABLE (")
    assert "MEMORY INDEX UNAVAILABLE" in stderr


def test_print_command_shows_what_would_run_and_keeps_the_file(
    lazy: Lazy, claude: Path, saved: None
) -> None:
    printed = lazy("launch", "claude", "--claude", str(claude), "--print-command", "--", "-p", "hi")
    # Without --claude or LAZY_CLAUDE (which CI sets for the real one), claude on PATH.
    described = lazy(
        "launch",
        "claude",
        "--print-command",
        "--json",
        "--task-id",
        "t",
        environment={"LAZY_CLAUDE": ""},
    )

    assert printed.returncode == 0
    words = shlex.split(printed.stdout)
    assert words[0] == "env"
    assert "LAZY_LAUNCHED=1" in words
    assert "LAZY_ROLE=builder" in words
    prompt_file = words[words.index("--append-system-prompt-file") + 1]
    assert words[-2:] == ["-p", "hi"]
    assert Path(prompt_file).read_text(encoding="utf-8") == lazy("memory", "context").stdout
    os.unlink(prompt_file)
    as_json = json.loads(described.stdout)
    assert as_json["command"][:2] == ["claude", "--append-system-prompt-file"]
    assert as_json["command"][3].startswith("--mcp-config=")
    assert as_json["environment"]["LAZY_TASK_ID"] == "t"
    assert as_json["section"]["records"] == 2
    os.unlink(as_json["prompt_file"])


def test_an_agent_launch_needs_a_task_id(lazy: Lazy) -> None:
    result = lazy("launch", "claude", "--role", "agent", "--print-command")

    assert result.returncode == 2
    assert result.stderr == "lazy: error: an agent launch needs its task id: add --task-id ID\n"


def test_an_agent_cannot_launch_a_builder(lazy: Lazy, claude: Path, tmp_path: Path) -> None:
    status, started, stderr = launch(lazy, claude, tmp_path, LAZY_TASK_ID="t-1")

    assert status == 6
    assert started == {}
    assert "may only launch agents" in stderr


def test_a_missing_claude_is_one_line(lazy: Lazy, tmp_path: Path) -> None:
    result = lazy("launch", "claude", "--claude", str(tmp_path / "nowhere"))
    as_json = lazy("launch", "claude", "--claude", str(tmp_path / "nowhere"), "--json")

    assert result.returncode == 127
    assert len(result.stderr.splitlines()) == 1
    assert "cannot start" in result.stderr
    error = json.loads(as_json.stderr)["error"]
    assert (as_json.returncode, error["type"], error["exit_status"]) == (
        127,
        "CommandNotFound",
        127,
    )
