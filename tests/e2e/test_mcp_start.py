"""`lazy mcp`'s start and its protocol on the raw wire: answered before the store is read.

Claude Code in `-p` mode sends its first model request without waiting for a slow MCP server,
so `initialize` and `tools/list` are answered before anything heavy is imported or the store is
opened (rpc/mcp/stdio.py). These tests speak JSON lines to the real process, not through the MCP
SDK (tests/e2e/test_mcp.py has the SDK's client): the wire shape is the contract.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lazy_memory.rpc.mcp.catalog import tool_list
from tests.e2e.silent_server import silent_server

LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]
TIMEOUT = 60.0
"""Seconds an answer may take before the test fails instead of hanging."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = ("lazy_memory_recall", "lazy_memory_save", "lazy_search")
HEAVY = ("pydantic", "asyncio", "mcp", "sqlite3", "pygls", "lazy_memory.engine.records")
"""What the start must not import: the engine's models, the event loop, the SDK, a driver."""


class Wire:
    """A `lazy mcp` process and the JSON lines it answers with."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self._reading = threading.Thread(target=self._read, daemon=True)
        self._reading.start()

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        """Write messages as lines, in one write."""
        assert self.process.stdin is not None
        lines = [m if isinstance(m, bytes) else json.dumps(m).encode() for m in messages]
        self.process.stdin.write(b"".join(line + b"\n" for line in lines))
        self.process.stdin.flush()

    def answer(self, message_id: Any) -> dict[str, Any]:
        """The answer to the request message_id, waiting for it."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if line.get("id") == message_id and "method" not in line:
                    return line
            if not self._reading.is_alive():
                break
            time.sleep(0.01)
        raise AssertionError(f"no answer to {message_id!r}; got {self.lines}")

    def close(self) -> int:
        """End the input, and the process's exit status once it has ended."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        status = self.process.wait(TIMEOUT)
        self._reading.join(TIMEOUT)
        return status

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(json.loads(line))


@contextmanager
def lazy_mcp(project: Path, data: Path, *python_options: str, **environment: str) -> Iterator[Wire]:
    """A `lazy mcp` in project on the store in data, killed afterwards if it still runs."""
    process = subprocess.Popen(
        [sys.executable, *python_options, *LAZY[1:], "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(data.parent / "mcp-stderr.log").open("ab"),
        cwd=project,
        env={**os.environ, "LAZY_DATA": str(data), **environment},
    )
    try:
        yield Wire(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def request(message_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC request (params left out when None)."""
    message = {"jsonrpc": "2.0", "id": message_id, "method": method}
    return message if params is None else {**message, "params": params}


def test_the_start_reads_no_store_and_imports_nothing_heavy(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with lazy_mcp(project, data, "-X", "importtime") as server:
        server.send(INITIALIZE)
        answered = server.answer(1)
        assert server.close() == 0
    assert answered["result"]["serverInfo"]["name"] == "lazy-memory"
    log = (tmp_path / "mcp-stderr.log").read_text()
    imported = {
        line.rsplit("|", 1)[1].strip() for line in log.splitlines() if line.startswith("import ")
    }
    assert "lazy_memory.rpc.mcp.protocol" in imported
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY or m in HEAVY)
    assert heavy == []
    assert not data.exists(), "a session that only looked created the store"


def test_tools_are_listed_while_the_store_does_not_answer(project: Path, tmp_path: Path) -> None:
    # A daemon that accepts and never answers, and a connect timeout past the test's own: the
    # tools can only be listed if listing them waits for nothing the store does.
    with (
        silent_server() as port,
        lazy_mcp(
            project,
            tmp_path / "data",
            LAZY_STORAGE="remote",
            LAZY_REMOTE=f"tcp:127.0.0.1:{port}",
            LAZY_TOKEN="lzm_any",
            LAZY_CONNECT_TIMEOUT="600",
        ) as server,
    ):
        server.send(INITIALIZE, INITIALIZED, request(2, "tools/list"))
        listed = server.answer(2)
        server.send(request(3, "ping"))
        assert server.answer(3)["result"] == {}
    assert tuple(tool["name"] for tool in listed["result"]["tools"]) == TOOLS
    assert listed["result"]["tools"] == tool_list(500_000)


def test_the_lifecycle_as_the_spec_has_it(project: Path, tmp_path: Path) -> None:
    with lazy_mcp(project, tmp_path / "data") as server:
        server.send(
            request("early", "tools/list"),
            request("early-ping", "ping"),
            request("early-call", "tools/call", {"name": "lazy_search", "arguments": {}}),
            INITIALIZE,
            INITIALIZED,
            request("old", "initialize", {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}),
            request("new", "initialize", {**INITIALIZE["params"], "protocolVersion": "2099-01-01"}),
            request("bad-init", "initialize", {"protocolVersion": "2025-06-18"}),
            request("resources", "resources/list"),
            request("no-name", "tools/call", {"arguments": {}}),
            request("bad-arguments", "tools/call", {"name": "lazy_search", "arguments": [1]}),
        )
        answers = {
            key: server.answer(key)
            for key in (
                "early",
                "early-ping",
                "early-call",
                1,
                "old",
                "new",
                "bad-init",
                "resources",
                "no-name",
                "bad-arguments",
            )
        }
        assert server.close() == 0
    refused = {"code": -32602, "message": "Invalid request parameters", "data": ""}
    assert answers["early"]["error"] == refused, "nothing but ping before initialize"
    assert answers["early-call"]["error"] == refused
    assert answers["early-ping"]["result"] == {}
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert answers["old"]["result"]["protocolVersion"] == "2024-11-05"
    assert answers["new"]["result"]["protocolVersion"] == "2025-11-25", "the newest it speaks"
    assert answers["bad-init"]["error"] == refused
    assert answers["resources"]["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": "resources/list",
    }
    assert answers["no-name"]["error"] == refused
    assert answers["bad-arguments"]["error"] == refused


def test_a_cancelled_call_is_not_answered_and_the_server_goes_on(
    project: Path, tmp_path: Path
) -> None:
    save = {"name": "cancelled", "type": "project", "description": "d", "body": "b"}
    with lazy_mcp(project, tmp_path / "data") as server:
        # In one write: the cancel is read while the tools are still being opened.
        server.send(
            INITIALIZE,
            INITIALIZED,
            request(2, "tools/call", {"name": "lazy_memory_save", "arguments": save}),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
            request(3, "tools/call", {"name": "lazy_memory_recall", "arguments": {}}),
        )
        index = server.answer(3)
        assert server.close() == 0
    assert [line for line in server.lines if line.get("id") == 2] == []
    assert not index["result"]["isError"]


def test_calls_still_running_at_the_end_of_input_are_answered(
    project: Path, tmp_path: Path
) -> None:
    # `printf ... | lazy mcp`: the input ends while the first call waits for the store.
    save = {"name": "piped", "type": "project", "description": "d", "body": "b"}
    with lazy_mcp(project, tmp_path / "data") as server:
        server.send(
            INITIALIZE,
            INITIALIZED,
            request(2, "tools/call", {"name": "lazy_memory_save", "arguments": save}),
            request(3, "tools/call", {"name": "lazy_memory_recall", "arguments": {"name": "x"}}),
        )
        assert server.close() == 0
    saved, unknown = server.answer(2), server.answer(3)
    assert saved["result"]["content"][0]["text"] == "saved piped (project) as revision 1"
    assert unknown["result"] == {
        "content": [{"type": "text", "text": "no record named 'x'"}],
        "isError": True,
    }


def test_lines_that_are_no_message_are_answered_by_id_when_they_have_one(
    project: Path, tmp_path: Path
) -> None:
    with lazy_mcp(project, tmp_path / "data") as server:
        server.send(
            INITIALIZE,
            b"",
            b'{"jsonrpc": "2.0", "id": 2.5, "method": "ping"}',
            b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
            b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 5}',
            b'{"jsonrpc": "2.0", "id": 4}',
            b'{"jsonrpc": "2.0", "id": 5, "result": {}}',
            b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]',
            b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"q": "\\ud800"}}',
            b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"q": "\\ud83d\\ude00"}}',
            b"not json",
            request(9, "ping"),
        )
        answers = {key: server.answer(key) for key in (3, 4, 7, 8, 9)}
        assert server.close() == 0
    assert answers[3]["error"]["code"] == -32600
    assert answers[4]["error"]["code"] == -32600
    assert answers[7]["error"]["code"] == -32700, "a lone surrogate is no text"
    assert answers[8]["result"] == {}, "a pair of surrogate escapes is one character"
    assert answers[9]["result"] == {}
    unnamed = [line["error"]["code"] for line in server.lines if line.get("id") is None]
    # ids 2.5 and true, the batch, and the line that is not JSON; the blank line is skipped,
    # and the client's own response (id 5) is dropped.
    assert sorted(unnamed) == [-32700, -32600, -32600, -32600]
    assert [line for line in server.lines if line.get("id") == 5] == []
