"""What a session's first model request held: lazy's tools, and the instructions about memory.

The first request is the one that counts: the model can call only the tools offered there
with their input schemas, and it reads its instructions there. Claude Code can offer an MCP
server's tools in three other ways (measured on 2.1.332 and 2.1.197 in `-p` mode):

- deferred behind ToolSearch (2.1.332, unless the server's `.mcp.json` entry says
  `"alwaysLoad": true`): `tools` holds ToolSearch, and a message names the tools, saying
  "Their schemas are NOT loaded";
- still connecting (a server slower than the first request, which `-p` does not wait for by
  default): 2.1.197 offers a WaitForMcpServers tool instead, and 2.1.332 names the server in a
  message ("The following MCP servers are still connecting");
- not at all (the server failed, or is not configured).

`declared_tools` asks a server what it declares in `tools/list`, as JSON-RPC over its stdio
(nothing of the MCP SDK in between); `lazy_tools_offer` says which of those four a request
did with lazy's; `memory_instructions` lists the instructions about memory it holds (lazy's
section, Claude Code's own auto memory). The tests assert on them and bench/first_request.py
counts sessions by them.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tests.support.anthropic_messages import request_text

SERVER = "lazy"
TOOL_PREFIX = f"mcp__{SERVER}__"
LAZY_TOOLS = ("lazy_memory_recall", "lazy_memory_save", "lazy_search")
"""What `lazy mcp` declares."""
OFFERED = "offered with their schemas"
OTHER_SCHEMA = "offered with other schemas"
DEFERRED = "deferred behind ToolSearch"
CONNECTING = "still connecting"
ABSENT = "not offered"
WAIT_TOOL = "WaitForMcpServers"
CONNECTING_LIST = "MCP servers are still connecting"
AUTO_MEMORY_SECTION = "# Memory\n\nYou have a persistent file-based memory at "
"""How Claude Code's own auto memory section starts (2.1.332 and 2.1.197)."""
LAZY_SECTION = "lazy's memory section"
AUTO_MEMORY = "Claude Code's auto memory"
_INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "lazy-memory-tests", "version": "0"},
}

Body = Mapping[str, Any]


def declared_tools(
    server: Mapping[str, Any], cwd: Path, environment: Mapping[str, str], timeout: float = 60
) -> dict[str, dict[str, Any]]:
    """Each tool's input schema, by name, as the `.mcp.json` entry server declares them.

    The server is started as Claude Code starts it (its command, args and env over
    environment), initialized, asked `tools/list`, and closed; one that has not answered
    within timeout seconds is killed and the call fails.
    """
    process = subprocess.Popen(
        [server["command"], *server.get("args", [])],
        cwd=cwd,
        env={**environment, **server.get("env", {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    if process.stdin is None or process.stdout is None:
        raise RuntimeError("the MCP server has no pipes")
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        _request(process.stdin, 1, "initialize", _INITIALIZE)
        _answer(process.stdout, 1)
        _send(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _request(process.stdin, 2, "tools/list", {})
        tools = _answer(process.stdout, 2)["tools"]
    finally:
        watchdog.cancel()
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
    return {tool["name"]: tool["inputSchema"] for tool in tools}


def _request(stream: IO[str], number: int, method: str, params: Mapping[str, Any]) -> None:
    _send(stream, {"jsonrpc": "2.0", "id": number, "method": method, "params": params})


def _send(stream: IO[str], message: Mapping[str, Any]) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def _answer(stream: IO[str], number: int) -> dict[str, Any]:
    """The result of request number, read past any notification the server sends first."""
    for line in stream:
        message = json.loads(line)
        if message.get("id") == number:
            if "error" in message:
                raise AssertionError(f"the MCP server answered request {number}: {message}")
            result: dict[str, Any] = message["result"]
            return result
    raise AssertionError(f"the MCP server exited (or was killed) before answering request {number}")


def lazy_tools_offer(body: Body, declared: Mapping[str, Mapping[str, Any]]) -> str:
    """What the request body did with lazy's declared tools: OFFERED, or why not."""
    if not declared:
        raise ValueError("no declared tools to look for")
    wanted = {TOOL_PREFIX + name: schema for name, schema in declared.items()}
    offered = {tool["name"]: tool for tool in body.get("tools", [])}
    loaded = [name for name in wanted if name in offered and not offered[name].get("defer_loading")]
    if len(loaded) == len(wanted):
        same = all(offered[name].get("input_schema") == wanted[name] for name in wanted)
        return OFFERED if same else OTHER_SCHEMA
    text = request_text(dict(body))
    if any(name in text or name in offered for name in wanted):
        return DEFERRED
    if WAIT_TOOL in offered or _listed_as_connecting(text):
        return CONNECTING
    return ABSENT


def _listed_as_connecting(text: str) -> bool:
    """Whether text has the list of servers still connecting, and lazy's is on it."""
    start = text.find(CONNECTING_LIST)
    if start < 0:
        return False
    listed = text[start:].split("\n\n", 1)[0].splitlines()[1:]
    return SERVER in (line.strip(" -") for line in listed)


def memory_instructions(body: Body, preamble: str) -> list[str]:
    """The instructions about memory body holds: LAZY_SECTION for each copy of lazy's section
    (found by preamble, its first line), AUTO_MEMORY for each of Claude Code's own."""
    text = request_text(dict(body))
    lazy = [LAZY_SECTION] * text.count(preamble)
    return lazy + [AUTO_MEMORY] * text.count(AUTO_MEMORY_SECTION)
