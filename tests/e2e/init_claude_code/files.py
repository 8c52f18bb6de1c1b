"""The Claude Code files of a project, for the tests of `lazy init --claude-code`.

What lazy writes in them (its SessionStart hook and MCP server), the files of a project
Claude Code already knows, and a snapshot of folders to compare.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

MODULE_WORDS = [sys.executable, "-m", "lazy_memory.rpc.cli"]
HOOK_COMMAND = shlex.join([*MODULE_WORDS, "memory", "context", "--hook"])
MATCHER = "startup|resume|clear|compact"


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


def path_without(program: str) -> str:
    """PATH less every folder that holds program."""
    return os.pathsep.join(
        folder
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if folder and not (Path(folder) / program).exists()
    )
