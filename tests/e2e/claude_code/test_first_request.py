"""The first model request of a session set up by `lazy init --claude-code`, as users run it.

Nothing is set that a user would not set (no MCP_CONNECTION_NONBLOCKING=0: see harness.py),
on the pinned release and on the older one. The first request must offer lazy's tools with
the input schemas `lazy mcp` declares (not deferred behind ToolSearch, not only
WaitForMcpServers), and hold exactly one instruction about memory: lazy's section once, and
not Claude Code's own auto memory section. The same through `lazy launch claude`; and a
forked session (`--resume ID --fork-session`) runs the hook again.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.claude_code.first_request import (
    LAZY_SECTION,
    LAZY_TOOLS,
    OFFERED,
    declared_tools,
    lazy_tools_offer,
    memory_instructions,
)
from tests.e2e.claude_code.harness import ClaudeCode, check_run
from tests.e2e.claude_code.lazy_project import fill, launch, lazy, lazy_server, preamble, set_up

pytestmark = pytest.mark.claude_code

ROLES = {"builder": {}, "agent": {"LAZY_TASK_ID": "T-1"}}
"""Each role's environment on the `claude` process, as an orchestrator sets it."""


def assert_first_request(
    claude_code: ClaudeCode, project: Path, environment: dict[str, str]
) -> None:
    """The first request offered lazy's tools with their schemas, and held one instruction
    about memory: lazy's section for the role of environment."""
    body = claude_code.api.message_requests[0].body
    declared = declared_tools(lazy_server(project), project, {**os.environ, **environment})
    assert sorted(declared) == list(LAZY_TOOLS)
    offer = lazy_tools_offer(body, declared)
    assert offer == OFFERED, f"lazy's tools were {offer}: {claude_code.api.tool_names(0)}"
    instructions = memory_instructions(body, preamble(project, **environment))
    assert instructions == [LAZY_SECTION]


def start(
    claude_code: ClaudeCode, project: Path, way: str, role: str
) -> subprocess.CompletedProcess[str]:
    """A session of role, started by hand (`claude -p`, the hook) or by `lazy launch claude`."""
    environment = ROLES[role]
    if way == "hook":
        return claude_code.run("hello", cwd=project, env=environment)
    task = ["--task-id", environment["LAZY_TASK_ID"]] if environment else []
    return launch(claude_code, project, *task, "--", "-p", "hello")


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("way", ["hook", "launch"])
def test_the_first_request_offers_the_tools_and_one_instruction_about_memory(
    each_claude_code: ClaudeCode, project: Path, isolated_environment: Path, way: str, role: str
) -> None:
    set_up(project)
    names = fill(isolated_environment, 20)

    check_run(start(each_claude_code, project, way, role))

    assert_first_request(each_claude_code, project, ROLES[role])
    given = each_claude_code.api.requests_text(0)
    assert all(f"- {name} (" in given for name in names)


def test_a_forked_session_runs_the_hook_and_gets_the_section(
    each_claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    fill(isolated_environment, 5)
    first = check_run(each_claude_code.run("hello", "--output-format", "json", cwd=project))
    session = json.loads(first.stdout)["session_id"]
    record = ["since-the-fork", "-t", "project", "-d", "New", "--body", "b"]
    saved = lazy(project, "memory", "save", *record)
    assert saved.returncode == 0, saved.stderr
    forked_at = len(each_claude_code.api.message_requests)

    check_run(each_claude_code.run("again", "--resume", session, "--fork-session", cwd=project))

    # The fork's transcript holds the first session's section; the hook's new one adds the line.
    assert "- since-the-fork (project): New" in each_claude_code.api.requests_text(forked_at)
