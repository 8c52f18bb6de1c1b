"""Run the real Claude Code CLI (`claude -p`) offline, against the fake Messages API.

How a run is isolated: `CLAUDE_CONFIG_DIR` and `HOME` are fresh temporary folders (nothing of
`~/.claude` or `~/.claude.json` leaks in, and what Claude Code writes, such as persisted tool
outputs and session logs, stays in the test's tmp_path), `ANTHROPIC_API_KEY` a fake key,
`ANTHROPIC_BASE_URL` is the fake, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
`DISABLE_TELEMETRY=1`, `DISABLE_AUTOUPDATER=1`, stdin is /dev/null, and every other
`ANTHROPIC_*` or `CLAUDE*` variable of the test runner is dropped. Nothing else is set: what
decides when MCP servers connect, or whether auto memory is on, is what a user gets. The rest
of the test's environment (PATH, LAZY_DATA, ...) passes through, as Claude Code passes its own
environment on to hooks and stdio MCP servers.

Two releases are tested: the pinned one (`$LAZY_CLAUDE`, CLAUDE_CODE_MEASURED_VERSION, whose
limits test_limits.py measures) and an older one the set-up must still work on
(`$LAZY_CLAUDE_2_1_197`, CLAUDE_CODE_OLDER_VERSION); .ci/run installs both.

What makes a project's own configuration count in `-p` mode (Claude Code 2.1.332 and 2.1.197,
measured):

- Project hooks in `<project>/.claude/settings.json` run with nothing else: the workspace
  trust dialog is skipped under `-p` (documented: "Trust verification is disabled when
  running non-interactively with the -p flag"), and the hooks are not gated on it there.
  SessionStart fires with source `startup`, `resume`, `clear` or `compact`, and on 2.1.332
  also `fork` (`--resume ID --fork-session`; 2.1.197 says `resume` there).
- Project MCP servers in `<project>/.mcp.json` are loaded too, with no approval and no
  `enableAllProjectMcpServers` (which an interactive session would need, or an approval in
  ~/.claude.json): their tools are offered to the model as `mcp__<server>__<tool>`.
- `--mcp-config FILE` adds servers from FILE on top of `.mcp.json`; with
  `--strict-mcp-config` only the `--mcp-config` servers are used and `.mcp.json` is ignored.
- MCP servers connect in the background in `-p` by default: the first request can go out
  before a slow server's tools are listed (2.1.197 offers a `WaitForMcpServers` tool instead,
  2.1.332 names the server as "still connecting" in a message), and a call of them then
  comes back as "<tool_use_error>Error: No such tool available: ...
  The MCP server 'X' is still connecting". 2.1.332 also defers every MCP tool behind its
  ToolSearch tool: the first request names them in a message ("Their schemas are NOT
  loaded") instead of offering them in `tools`. A server entry with `"alwaysLoad": true`
  (`stdio_server(..., always_load=True)`) is waited for (up to `MCP_CONNECT_TIMEOUT_MS`, 5 s)
  and its tools are offered with their schemas, on both releases.
- Calling a tool needs permission in `-p`: `--allowedTools mcp__<server>__<tool>` (one
  argument per tool, or comma-separated); a tool not allowed comes back to the model as a
  `tool_result` with `is_error: true`.

Hook and server commands should start Python as `sys.executable` (see `python_command`):
with HOME moved, a pyenv shim for `python3` may not find its interpreter.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lazy_memory.adapters.config import CLAUDE_CODE_MEASURED_VERSION, CLAUDE_CODE_OLDER_VERSION
from tests.support.fake_anthropic import FAKE_API_KEY, FakeAnthropic

CLAUDE_ENV = "LAZY_CLAUDE"
"""The environment variable that names the claude binary to test (set by .ci/run)."""
PINNED_VERSION = CLAUDE_CODE_MEASURED_VERSION
OLDER_VERSION = CLAUDE_CODE_OLDER_VERSION
OLDER_CLAUDE_ENV = f"{CLAUDE_ENV}_{OLDER_VERSION.replace('.', '_')}"
"""The environment variable that names the older release's claude (LAZY_CLAUDE_2_1_197)."""


def install_hint(version: str, variable: str) -> str:
    """What to do when the claude of version, named by variable, is not installed."""
    return (
        "Claude Code is not installed: run .ci/run or npm install "
        f"@anthropic-ai/claude-code@{version} and set {variable}"
    )


INSTALL_HINT = install_hint(PINNED_VERSION, CLAUDE_ENV)
DEFAULT_TIMEOUT_SECONDS = 90.0
_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE")


def locate_claude() -> str | None:
    """The claude binary to test: $LAZY_CLAUDE, else `claude` on PATH, else None."""
    named = os.environ.get(CLAUDE_ENV)
    if named:
        return named
    return shutil.which("claude")


def claude_version(binary: str) -> str:
    """The version binary reports, e.g. "2.1.197" (from "2.1.197 (Claude Code)")."""
    completed = subprocess.run(
        [binary, "--version"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    words = completed.stdout.split()
    if completed.returncode != 0 or not words:
        raise RuntimeError(
            f"{binary} --version exited {completed.returncode}: "
            f"{completed.stdout}{completed.stderr}"
        )
    return words[0]


def python_command(*arguments: str | Path) -> str:
    """A shell command line that runs this interpreter with arguments, each quoted."""
    return shlex.join([sys.executable, *map(str, arguments)])


def session_start_hook(command: str, timeout_seconds: float | None = None) -> dict[str, Any]:
    """One SessionStart matcher group (settings.json `hooks.SessionStart[]`) running command."""
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout_seconds is not None:
        hook["timeout"] = timeout_seconds
    return {"hooks": [hook]}


def write_settings(project: Path, settings: Mapping[str, Any]) -> Path:
    """Write the project's `.claude/settings.json` (replacing it) and return its path."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return path


def write_session_start_hooks(project: Path, *commands: str) -> Path:
    """Write project settings whose SessionStart hooks run commands, each a group of its own."""
    hooks = [session_start_hook(command) for command in commands]
    return write_settings(project, {"hooks": {"SessionStart": hooks}})


def stdio_server(
    command: str | Path,
    *arguments: str | Path,
    env: Mapping[str, str] | None = None,
    always_load: bool = False,
) -> dict[str, Any]:
    """One stdio server entry of an MCP config file (`mcpServers.NAME`); always_load makes
    Claude Code wait for it and offer its tools with their schemas in the first request."""
    entry: dict[str, Any] = {"command": str(command), "args": [str(a) for a in arguments]}
    if env:
        entry["env"] = dict(env)
    if always_load:
        entry["alwaysLoad"] = True
    return entry


def write_mcp_config(path: Path, servers: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write an MCP config (`{"mcpServers": servers}`) to path: a project's `.mcp.json`, or
    a file for `--mcp-config`. Returns path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": dict(servers)}, indent=2), encoding="utf-8")
    return path


@dataclass
class ClaudeCode:
    """The real Claude Code, pointed at a fake Messages API, with state under state_dir."""

    binary: str
    api: FakeAnthropic
    state_dir: Path

    @property
    def config_dir(self) -> Path:
        """CLAUDE_CONFIG_DIR of every run (its `.claude.json`, projects/, persisted outputs)."""
        return self.state_dir / "config"

    @property
    def home(self) -> Path:
        """HOME of every run."""
        return self.state_dir / "home"

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a run gets: the test's, minus Claude/Anthropic settings, plus ours."""
        environment = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(_DROPPED_PREFIXES)
        }
        environment.update(
            HOME=str(self.home),
            CLAUDE_CONFIG_DIR=str(self.config_dir),
            ANTHROPIC_API_KEY=FAKE_API_KEY,
            ANTHROPIC_BASE_URL=self.api.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
        )
        environment.update(extra or {})
        return environment

    def run(
        self,
        prompt: str,
        *arguments: str | Path,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> subprocess.CompletedProcess[str]:
        """Run `claude -p PROMPT ARGUMENTS...` in cwd and return it once it exits.

        A run that outlives timeout is killed with everything it started (hooks, MCP
        servers), and the test fails with what it had printed.
        """
        command = [self.binary, "-p", prompt, *map(str, arguments)]
        return self.run_command(command, cwd=cwd, env=env, timeout=timeout)

    def run_command(
        self,
        command: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> subprocess.CompletedProcess[str]:
        """Run command (one that starts this Claude Code, such as `lazy launch claude`) as
        run() runs claude, in this Claude Code's environment."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=self.environment(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            raise AssertionError(
                f"{shlex.join(command[:2])} ... ran past {timeout:.0f} s and was killed\n"
                f"stdout: {stdout}\nstderr: {stderr}"
            ) from None
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def check_run(completed: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """completed, if it exited 0; else fail the test with its output."""
    if completed.returncode != 0:
        raise AssertionError(
            f"{shlex.join(completed.args[:2])} ... exited {completed.returncode}\n"
            f"stdout: {completed.stdout}\nstderr: {completed.stderr}"
        )
    return completed
