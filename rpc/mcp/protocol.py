"""MCP's lifecycle on one stdio connection: reading a line, and answering what needs no store.

`lazy mcp` speaks MCP's stdio transport (JSON-RPC 2.0, one message a line) itself, with the
standard library only, so that it answers `initialize` and `tools/list` within tens of
milliseconds of being spawned: Claude Code in `-p` mode sends its first model request without
waiting for a slow server, and then the tools are not there. (The MCP SDK took about a second
to import here, several on a busy machine; the SDK's client, the MCP Inspector and the real
Claude Code are the referees of this protocol in the tests.)

What it implements of MCP (revisions 2024-11-05 to 2025-11-25, the ones negotiated by
`initialize`): `initialize` (the client's revision if it is one of those, else the newest),
`ping`, `tools/list`, `tools/call` (handed back to the caller as a Call: the tools need the
store, rpc/mcp/tools.py), notifications (`notifications/cancelled` is the caller's too), and a
JSON-RPC error for anything else: -32601 for a method it does not serve, -32602 for a request
before `initialize` or with malformed params, -32700 for a line that is not JSON, -32600 for
JSON that is not a JSON-RPC 2.0 message. A line that cannot be read is answered with its id
when it has one, so a client never waits forever. Responses a client sends are dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from lazy_memory.rpc.mcp.catalog import INSTRUCTIONS, SERVER_NAME, tool_list

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The MCP revisions negotiated by `initialize`, oldest first."""
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate: paired, it is one character; alone, it is no text."""

Message = dict[str, Any]
ToolResult = dict[str, Any]
"""MCP's CallToolResult, as JSON: `content`, `isError`, and `structuredContent` when any."""


class Call(NamedTuple):
    """A `tools/call` request: the caller runs the tool and answers it."""

    id: int | str
    tool: str
    arguments: dict[str, Any]


class Unreadable(NamedTuple):
    """A line that is no JSON-RPC message, and the error that answers it."""

    answer: Message
    why: str


def read_message(line: bytes) -> Message | Unreadable | None:
    """The message a line holds, the error answering it, or None for a blank line.

    Bytes that are not UTF-8 are read as U+FFFD (a body may carry them; the text rules then
    apply); a lone surrogate escape (`"\\ud800"`, which a client's JavaScript writes for an emoji
    cut in half) is no text, so the line is refused as invalid JSON.
    """
    if not line.strip():
        return None
    try:
        message = json.loads(line.decode("utf-8", errors="replace"))
        if _SURROGATE_ESCAPE.search(line) and _holds_lone_surrogate(message):
            raise ValueError("a string holds a lone UTF-16 surrogate escape")
    except (ValueError, RecursionError) as error:
        message_id = _id_of_unparsable(line)
        return _unreadable(message_id, PARSE_ERROR, f"the message is not valid JSON: {error}")
    if not isinstance(message, dict):
        return _unreadable(None, INVALID_REQUEST, "a message must be a JSON object")
    message_id = message.get("id")
    if "id" in message and not _valid_id(message_id):
        return _unreadable(None, INVALID_REQUEST, "an id must be a string or an integer")
    if message.get("jsonrpc") != "2.0":
        return _unreadable(message_id, INVALID_REQUEST, 'the message lacks "jsonrpc": "2.0"')
    if "method" in message:
        if not isinstance(message["method"], str):
            return _unreadable(message_id, INVALID_REQUEST, "the method must be a string")
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return _unreadable(message_id, INVALID_REQUEST, "the params must be an object")
        return message
    if "id" in message and ("result" in message or "error" in message):
        return message  # a client's response: dropped by the session
    return _unreadable(message_id, INVALID_REQUEST, "the message has no method")


class McpSession:
    """One client's session: what `initialize` settled, and the answers that need no store."""

    def __init__(self, version: str, result_limit_chars: int) -> None:
        self._version = version
        self._result_limit_chars = result_limit_chars
        self.initialized = False
        """Whether `initialize` was answered: until then only `ping` is served."""

    def answer(self, message: Message) -> Message | Call | None:
        """The response to message, a Call for the caller to answer, or None (a notification
        or a client's response: nothing to say)."""
        if "method" not in message or "id" not in message:
            return None
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "ping":
            return result(request_id, {})
        if method == "initialize":
            return self._initialize(request_id, params)
        if method not in ("tools/list", "tools/call"):
            return error(request_id, METHOD_NOT_FOUND, "Method not found", method)
        if not self.initialized:
            return error(request_id, INVALID_PARAMS, "Invalid request parameters", "")
        if method == "tools/list":
            return result(request_id, {"tools": tool_list(self._result_limit_chars)})
        tool, arguments = params.get("name"), params.get("arguments")
        if not isinstance(tool, str) or not isinstance(arguments, dict | None):
            return error(request_id, INVALID_PARAMS, "Invalid request parameters", "")
        return Call(request_id, tool, arguments or {})

    def _initialize(self, request_id: int | str, params: dict[str, Any]) -> Message:
        requested = params.get("protocolVersion")
        client = params.get("clientInfo")
        if not (
            isinstance(requested, str)
            and isinstance(params.get("capabilities"), dict)
            and isinstance(client, dict)
            and isinstance(client.get("name"), str)
            and isinstance(client.get("version"), str)
        ):
            return error(request_id, INVALID_PARAMS, "Invalid request parameters", "")
        self.initialized = True
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return result(
            request_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "version": self._version},
                "instructions": INSTRUCTIONS,
            },
        )


def result(request_id: int | str, value: Message) -> Message:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: int | str | None, code: int, text: str, data: Any = None) -> Message:
    """A JSON-RPC error response."""
    body: Message = {"code": code, "message": text}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def tool_error(text: str) -> ToolResult:
    """A tool's error result: the model reads text and may try again."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def internal_error(error: Exception) -> ToolResult:
    """The error result a call gets when lazy-memory itself failed: the details go to the log."""
    return tool_error(
        f"lazy-memory failed with an internal error ({type(error).__name__}); the details are "
        "in the server's log"
    )


def encode(message: Message) -> bytes:
    """A message as one line of UTF-8 JSON (escaped ASCII if some string is no valid text)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def _unreadable(message_id: Any, code: int, why: str) -> Unreadable:
    return Unreadable(error(message_id, code, why), why)


def _valid_id(message_id: Any) -> bool:
    return isinstance(message_id, int | str) and not isinstance(message_id, bool)


def _id_of_unparsable(line: bytes) -> int | str | None:
    """The id of a line refused as JSON, when Python's own reader can still read it."""
    try:
        message = json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None
    message_id = message.get("id") if isinstance(message, dict) else None
    return message_id if _valid_id(message_id) else None


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in a parsed JSON value holds a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(map(_holds_lone_surrogate, value)) or any(
            map(_holds_lone_surrogate, value.values())
        )
    if isinstance(value, list):
        return any(map(_holds_lone_surrogate, value))
    return False
