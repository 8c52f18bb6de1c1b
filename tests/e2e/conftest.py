"""The end-to-end tests' fixtures: the real `lazy` command in a subprocess, in a project folder
of its own; an MCP session with `lazy mcp` (`connect`); an editor's `lazy engine`
(`start_editor`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.editor_sessions import StartEditor
from tests.support.jsonrpc import RawClient

if TYPE_CHECKING:
    from tests.e2e.mcp_sessions import Connect

Lazy = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (a git root) for the command to run in."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def memory_dir(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This project's Claude Code memory directory, under a config dir of the test's own."""
    config = tmp_path / "claude"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project.resolve()))
    directory = config / "projects" / slug / "memory"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def lazy(project: Path) -> Lazy:
    """Run `lazy ARGS...` in the project; stdin is empty unless input= is given."""

    def run(
        *arguments: str, input: str = "", environment: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
            cwd=project,
            input=input,
            capture_output=True,
            text=True,
            env={**os.environ, **(environment or {})},
            timeout=60,
        )

    return run


def lazy_in(root: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """`lazy ARGS` in root; stdin closed off, the environment the test's with these on top."""
    return subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **environment},
        timeout=60,
    )


@pytest.fixture
def connect(project: Path, isolated_environment: Path, tmp_path: Path) -> Connect:
    """Start `lazy mcp` in the project, with extra environment, and open an MCP session."""
    # Imported here, not above: only the tests that speak MCP load its SDK.
    from tests.e2e.mcp_sessions import session_opener

    return session_opener(project, isolated_environment, tmp_path / "server-stderr.log")


@pytest.fixture
async def start_editor(tmp_path: Path) -> AsyncIterator[StartEditor]:
    """Start an initialized `lazy engine` for an editor declaring the given capabilities."""
    clients: list[RawClient] = []

    async def start(capabilities: dict[str, Any], **environment: str) -> RawClient:
        environment = {"LAZY_ACTOR": "editor-user", "LAZY_POLL_SECONDS": "0.2", **environment}
        client = await RawClient.spawn(
            ["engine"], {**os.environ, **environment}, tmp_path / "engine.log"
        )
        clients.append(client)
        assert "result" in await client.initialize(capabilities=capabilities)
        return client

    yield start
    for client in clients:
        await client.kill()
