"""Hostile input (issue #11, part 3): the MCP entry point, property-based.

A real `lazy mcp` behind the MCP SDK's client gets generated tool calls whose arguments carry
control characters, NUL, lone surrogates, SQL, and text imitating the frames around them; a raw
pipe to another gets garbage between its requests. Nothing may crash: each call gets a result or
an error result, a save the rules accept is kept byte-identical, and the server keeps serving.

Covered elsewhere, not repeated: what every output shows of hostile text
(test_hostile_output.py).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazy_memory.engine.visible import visible_line, visible_text
from tests.reliability.figures import Figures, Scale
from tests.reliability.hostile import (
    HEADING,
    process_environment,
    run_settings,
    shared_process,
)
from tests.reliability.live_engine import LAZY, LiveMcp
from tests.support.hostile_text import (
    CORPUS,
    SQL,
    TYPES,
    is_unicode,
    json_values,
    one_line,
    storable_text,
    unsafe_characters,
    valid_names,
    valid_save,
)

SAVE_ARGUMENTS = frozenset({"name", "type", "description", "body"})
"""What a valid lazy_memory_save call may carry here: any argument it does not take is an error."""


# The MCP entry point: the real `lazy mcp` behind the MCP SDK's client.


@pytest.fixture(scope="module")
def mcp_server(workspace: Path) -> Iterator[LiveMcp]:
    """A builder's `lazy mcp` on a sqlite store, shared by the module's examples."""
    yield from shared_process(LiveMcp, workspace, "mcp")


TOOL_TEXT = st.one_of(storable_text(120), st.sampled_from([c for c in CORPUS if is_unicode(c)]))
TOOL_ARGUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(valid_names(), TOOL_TEXT),
        "type": st.one_of(st.sampled_from(TYPES), TOOL_TEXT),
        "description": st.one_of(one_line(), TOOL_TEXT),
        "body": TOOL_TEXT,
        "query": TOOL_TEXT,
        "extra": json_values(storable_text(10)),
    },
)
TOOLS = st.sampled_from(["lazy_memory_save", "lazy_memory_recall", "lazy_search", "lazy_nothing"])
VALID_SAVE_ARGUMENTS = st.fixed_dictionaries(
    {
        "name": valid_names(),
        "type": st.sampled_from(TYPES),
        "description": one_line(),
        "body": TOOL_TEXT,
    }
)
# Half the calls are saves the rules accept, hostile wherever a record may be.
TOOL_CALLS = st.one_of(
    st.tuples(st.just("lazy_memory_save"), VALID_SAVE_ARGUMENTS),
    st.tuples(TOOLS, TOOL_ARGUMENTS),
)


def test_every_tool_call_gets_a_result_or_an_error_result_and_the_server_keeps_serving(
    mcp_server: LiveMcp, workspace: Path, scale: Scale, figures: Figures
) -> None:
    tried = accepted = 0
    stored: dict[str, list[str]] = {}

    @run_settings(scale, 40, 1_000)
    @given(TOOL_CALLS)
    @example(
        ("lazy_memory_save", {"name": "sql", "type": "user", "description": SQL[0], "body": SQL[1]})
    )
    @example(
        ("lazy_memory_save", {"name": "nul", "type": "user", "description": "\x00", "body": "\x00"})
    )
    @example(("lazy_search", {"query": "\x00 '; DROP TABLE records; --"}))
    @example(("lazy_memory_recall", {"name": "'; DROP TABLE records; --"}))
    def check(call: tuple[str, dict[str, Any]]) -> None:
        nonlocal tried, accepted
        tried += 1
        tool, arguments = call
        result = mcp_server.call(lambda session: session.call_tool(tool, arguments))
        assert isinstance(result.is_error, bool)
        assert result.content, "every answer carries text for the model"
        assert unsafe_characters(json.dumps(result.model_dump(), ensure_ascii=False)) == []
        fields = [arguments.get(key) for key in ("name", "type", "description", "body")]
        fields = json.loads(json.dumps(fields))
        if tool == "lazy_memory_save" and all(isinstance(value, str) for value in fields):
            if valid_save(*fields) and set(arguments) <= SAVE_ARGUMENTS:
                assert not result.is_error, result
                accepted += not (result.structured_content or {}).get("unchanged", False)
                stored[fields[0]] = fields
                recalled = mcp_server.call(
                    lambda session: session.call_tool("lazy_memory_recall", {"name": fields[0]})
                )
                # What the model reads is made visible; the store keeps the bytes (below).
                record = recalled.structured_content
                name, type, description, body = fields
                shown = [visible_line(name), type, visible_line(description), visible_text(body)]
                assert [record[k] for k in ("name", "type", "description", "body")] == shown
            else:
                assert result.is_error, result
        elif tool == "lazy_nothing":
            assert result.is_error

    check()
    listed = subprocess.run(
        [*LAZY, "memory", "history", "--json"],
        env=process_environment(workspace, workspace / "mcp-data"),
        cwd=workspace / "project",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert len(json.loads(listed.stdout)) == accepted, "a refused save wrote something"
    records = subprocess.run(
        [*LAZY, "memory", "list", "--json"],
        env=process_environment(workspace, workspace / "mcp-data"),
        cwd=workspace / "project",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    fields = ("name", "type", "description", "body")
    kept = {r["name"]: [r[k] for k in fields] for r in json.loads(records.stdout)}
    assert kept == stored, "an MCP save did not keep its text byte-identical"
    figures.add(HEADING, f"MCP server: {tried} generated tool calls, 0 crashes, {accepted} saves")


def test_garbage_on_the_mcp_wire_never_stops_the_server(workspace: Path, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [*LAZY, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "mcp.log").open("wb"),
        env=process_environment(workspace, tmp_path / "data"),
        cwd=workspace / "project",
    )
    assert server.stdin is not None
    assert server.stdout is not None
    lines: list[bytes] = []
    reading = threading.Thread(target=lambda: lines.extend(server.stdout or ()), daemon=True)
    reading.start()

    def send(data: bytes) -> None:
        assert server.stdin is not None
        server.stdin.write(data + b"\n")
        server.stdin.flush()

    def answered(message_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for line in lines:
                message = json.loads(line)
                if message.get("id") == message_id:
                    return dict(message)
            time.sleep(0.02)
        raise AssertionError(f"no answer to request {message_id}")

    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"},
    }
    send(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        ).encode()
    )
    answered(1)
    send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    garbage = [
        b"garbage",
        b"\xff\xfe\x00",
        b"\x00" * 64,
        b'{"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {"name": '
        b'"lazy_search", "arguments": {"query": "\\ud800"}}}',
        b'{"jsonrpc": "2.0", "id": 901, "method": 5}',
        b'{"jsonrpc": "1.0", "id": 902, "method": "tools/list"}',
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": 903, "method": "tools/call", "params": {"name": '
        b'"lazy_memory_save", "arguments": {"name": "big", "type": "user", "description": '
        b'"d", "body": "' + b"\xff" * 10 + b"x" * (5 * 1024 * 1024) + b'"}}}',
        b"Content-Length: 10\r\n\r\n{}",
    ]
    for number, junk in enumerate(garbage, start=2):
        send(junk)
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "lazy_memory_recall", "arguments": {}},
                }
            ).encode()
        )
        assert "result" in answered(number), f"no answer after {junk[:40]!r}"
    assert server.poll() is None
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    reading.join(timeout=30)
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", "stdout carries only protocol messages"
    big = answered(903)  # 5 MB with bytes that are not UTF-8: read, and refused by the limit
    assert big["result"]["isError"] is True, big
    assert "the limit is 65,536 bytes" in big["result"]["content"][0]["text"]
    # A request the SDK cannot read is answered all the same, with its id: the client does
    # not wait forever (rpc/mcp/stdio.py answers what the SDK's transport would drop).
    assert answered(900)["error"]["code"] == -32700  # a lone surrogate escape
    assert answered(901)["error"]["code"] == -32600  # a method that is not a string
    assert answered(902)["error"]["code"] == -32600  # not JSON-RPC 2.0
    unanswerable = [json.loads(line) for line in lines if json.loads(line).get("id") is None]
    assert {message["error"]["code"] for message in unanswerable} <= {-32700, -32600}
