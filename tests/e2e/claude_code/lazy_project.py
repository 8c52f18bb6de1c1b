"""A repository set up the way a user sets it up, and lazy's commands run in it.

`set_up` runs the one command a user runs, `lazy init --claude-code`, with no flag and no
terminal (the defaults, as a script or an orchestrator gets them); `fill` puts realistic
records in the store; `launch` starts a session through `lazy launch claude`.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import fill_store
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType
from tests.e2e.claude_code.first_request import SERVER
from tests.e2e.claude_code.harness import ClaudeCode

LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]


def lazy(project: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """`lazy ARGUMENTS` in project, with the test's environment and environment over it."""
    return subprocess.run(
        [*LAZY, *arguments],
        cwd=project,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def set_up(project: Path) -> None:
    """The one command a user runs."""
    done = lazy(project, "init", "--claude-code")
    assert done.returncode == 0, done.stderr


def lazy_server(project: Path) -> dict[str, Any]:
    """The `lazy` entry `lazy init --claude-code` wrote in the project's `.mcp.json`."""
    servers = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    server: dict[str, Any] = servers[SERVER]
    return server


def preamble(project: Path, **environment: str) -> str:
    """The first line of the memory section lazy renders for that environment's role."""
    section = lazy(project, "memory", "context", **environment)
    assert section.returncode == 0, section.stderr
    return section.stdout.splitlines()[0]


def fill(data_dir: Path, count: int, descriptions: str | None = None) -> list[str]:
    """count realistic records (or ones with the given description), their names in order."""

    async def write() -> list[str]:
        storage = await SqliteStorage.open(data_dir / "memory.db")
        try:
            if descriptions is None:
                return [record.name for record in await fill_store(storage, count)]
            names = []
            for number in range(count):
                saved = await storage.save_record(
                    RecordContent(
                        name=f"note-{number:04d}",
                        type=list(RecordType)[number % 4],
                        description=f"{descriptions} {number}",
                        body="body",
                    ),
                    actor=Actor(kind=ActorKind.HUMAN, detail="test"),
                    at=datetime.now(UTC),
                )
                names.append(saved.name)
            return names
        finally:
            await storage.aclose()

    return asyncio.run(write())


def launch(
    claude_code: ClaudeCode, project: Path, *arguments: str
) -> subprocess.CompletedProcess[str]:
    """`lazy launch claude ARGUMENTS` with the test's Claude Code and its environment."""
    command = [*LAZY, "launch", "claude", "--claude", claude_code.binary, *arguments]
    return claude_code.run_command(command, cwd=project)
