"""`lazy mcp` as the MCP Inspector's CLI sees it: a second client, not written in Python.

`lazy mcp` speaks MCP itself (rpc/mcp/protocol.py), so the protocol has referees other than
its author: the MCP SDK's Python client (tests/e2e/test_mcp.py), the real Claude Code
(tests/e2e/claude_code) and here the Inspector (`@modelcontextprotocol/inspector`, installed by
.ci/run and named by LAZY_MCP_INSPECTOR), each run a whole session against the real process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.rpc.mcp.catalog import tool_list
from tests.support.components import NODE, missing

INSPECTOR_ENV = "LAZY_MCP_INSPECTOR"
"""The environment variable naming the Inspector's `mcp-inspector` binary (set by .ci/run)."""

pytestmark = pytest.mark.node


@pytest.fixture
def inspect(project: Path, isolated_environment: Path) -> Any:
    """Run the Inspector's CLI against `lazy mcp` in the project: its exit status and JSON."""
    inspector = os.environ.get(INSPECTOR_ENV) or shutil.which("mcp-inspector")
    if inspector is None:
        missing(
            NODE,
            "the MCP Inspector is not installed: run .ci/run or npm install "
            f"@modelcontextprotocol/inspector and set {INSPECTOR_ENV}",
        )

    def run(*arguments: str) -> tuple[int, dict[str, Any]]:
        done = subprocess.run(
            [inspector, "--cli", sys.executable, "-m", "lazy_memory.rpc.cli", "mcp", *arguments],
            cwd=project,
            env={**os.environ, "LAZY_DATA": str(isolated_environment)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        return done.returncode, json.loads(done.stdout)

    return run


def test_the_inspector_initializes_and_lists_the_tools(inspect: Any) -> None:
    status, initialized = inspect("--method", "initialize")
    assert status == 0, initialized
    assert initialized["serverInfo"]["name"] == "lazy-memory"
    assert initialized["capabilities"] == {"tools": {"listChanged": False}}
    status, listed = inspect("--method", "tools/list")
    assert status == 0, listed
    assert listed["tools"] == tool_list(500_000)


def test_the_inspector_saves_recalls_and_reads_an_error_result(inspect: Any) -> None:
    fields = {"name": "inspected", "type": "project", "description": "Seen by the Inspector"}
    arguments = [f"--tool-arg={key}={value}" for key, value in {**fields, "body": "b"}.items()]
    status, saved = inspect("--method", "tools/call", "--tool-name", "lazy_memory_save", *arguments)
    assert status == 0, saved
    assert saved["content"] == [{"type": "text", "text": "saved inspected (project) as revision 1"}]
    status, index = inspect("--method", "tools/call", "--tool-name", "lazy_memory_recall")
    assert status == 0, index
    assert "- inspected (project): Seen by the Inspector" in index["content"][0]["text"]
    status, refused = inspect(
        "--method", "tools/call", "--tool-name", "lazy_memory_recall", "--tool-arg=page=0"
    )
    # The Inspector fails for an error result, and prints the result itself on stdout.
    assert status != 0
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == (
        "lazy_memory_recall: the argument page takes an integer of at least 1, not 0."
    )
