"""The Claude Code files of a project, for the tests of `lazy init --claude-code`.

What lazy writes in them (its SessionStart hook and MCP server), the files of a project
Claude Code already knows, and a snapshot of folders to compare. The hook's command is built
by the function init uses: what it does is tested by running it (test_hook_command.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from lazy_memory.adapters.claude_code.hook import hook_command

MODULE_WORDS = [sys.executable, "-m", "lazy_memory.rpc.cli"]
BOUND = 20
"""The seconds the hook command gives lazy by default: twice hook_timeout_seconds (10)."""


def command_of(words: list[str] = MODULE_WORDS) -> str:
    """The hook command init writes for lazy started by words, on a default store."""
    return hook_command(tuple(words), bound=BOUND, log_dir=".lazy")


HOOK_COMMAND = command_of()


def our_hook(command: str = HOOK_COMMAND) -> dict[str, Any]:
    """lazy's SessionStart group: no matcher (every source), Claude Code's timeout 30 s."""
    return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}


def our_server(words: list[str] = MODULE_WORDS) -> dict[str, Any]:
    """lazy's `.mcp.json` entry: always loaded, and no store path (lazy finds it)."""
    return {"command": words[0], "args": [*words[1:], "mcp"], "alwaysLoad": True}


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


def path_without(program: str) -> str:
    """PATH less every folder that holds program."""
    return os.pathsep.join(
        folder
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if folder and not (Path(folder) / program).exists()
    )
