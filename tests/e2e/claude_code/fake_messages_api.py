"""A fake, streaming Anthropic Messages API on loopback, for the real Claude Code CLI.

Claude Code (`claude -p`) POSTs `/v1/messages?beta=true` with `"stream": true` and reads the
answer as server-sent events: `message_start` (a message with empty content), then for each
content block `content_block_start`, `content_block_delta` (`text_delta`, or
`input_json_delta` carrying the tool input as a JSON string) and `content_block_stop`, then
`message_delta` (with the `stop_reason`) and `message_stop`. It also POSTs
`/v1/messages/count_tokens`, answered `{"input_tokens": N}`: N is `token_counter(body)`, by
default a quarter of the request's size in bytes. Claude Code asks it when an MCP tool result
looks large (over about 12,500 tokens at 4 characters a token) and refuses a result counted
over its MCP token cap, so the figure matters. Any other path is a 404 in the API's own error
shape.

A test scripts the replies and reads back what the model was given::

    api.script(ToolUse("mcp__lazy__lazy_memory_recall"), "done")  # a tool call, then text
    ...run claude...
    assert "the marker" in api.requests_text()          # system prompt + messages, request 1
    [result] = api.tool_results()                        # tool_result blocks of later requests
    assert not result.is_error

Replies are used in order and the last one repeats. Only `/v1/messages` requests take a reply
from the script; `count_tokens` requests are recorded but answered without it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from tests.fake_anthropic import Received

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


@dataclass(frozen=True)
class ToolUse:
    """A scripted reply that calls one tool: its full name (`mcp__server__tool`) and input."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


Reply = str | ToolUse
"""A scripted reply: a text answer (`end_turn`), or a `ToolUse` (`tool_use`)."""


@dataclass(frozen=True)
class ToolResult:
    """A `tool_result` block Claude Code sent back: the call it answers, its text, is_error."""

    tool_use_id: str
    content: str
    is_error: bool


class FakeMessagesApi:
    """The fake server: start() it (or use it as a context manager), script() it, read it."""

    def __init__(self, *replies: Reply) -> None:
        self.requests: list[Received] = []
        self.token_counter: Callable[[dict[str, Any]], int] = estimate_tokens
        """What count_tokens answers for a request body; replace it to script the count."""
        self._script: list[Reply] = list(replies) or ["done"]
        self._calls = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        # A short poll keeps stop(), and so every test's teardown, quick.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))

    @property
    def url(self) -> str:
        """The base URL to give Claude Code as ANTHROPIC_BASE_URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        """Answer the next message requests with replies, in order; the last one repeats."""
        if not replies:
            raise ValueError("script() needs at least one reply")
        with self._lock:
            self._script = list(replies)

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def message_requests(self) -> list[Received]:
        """The `/v1/messages` requests, in the order they came (count_tokens left out)."""
        with self._lock:
            return [request for request in self.requests if _route(request) == MESSAGES_PATH]

    def requests_text(self, index: int = 0) -> str:
        """Everything the model was given in one message request: system blocks and messages.

        The first request by default: the one that holds what a session starts with (the
        system prompt, SessionStart hook output, the prompt).
        """
        requests = self.message_requests
        if len(requests) <= index:
            raise AssertionError(
                f"Claude Code sent {len(requests)} message request(s), not {index + 1}"
            )
        return request_text(requests[index].body)

    def tool_results(self) -> list[ToolResult]:
        """Every distinct tool_result block in the message requests, in the order first sent.

        Claude Code resends the whole conversation each turn, so a result appears in every
        later request; it is listed once.
        """
        seen: dict[str, ToolResult] = {}
        for request in self.message_requests:
            for block in _blocks(request.body):
                if block.get("type") == "tool_result":
                    result = ToolResult(
                        tool_use_id=str(block.get("tool_use_id", "")),
                        content=_text_of(block.get("content", "")),
                        is_error=bool(block.get("is_error", False)),
                    )
                    seen.setdefault(result.tool_use_id, result)
        return list(seen.values())

    def tool_names(self, index: int = 0) -> list[str]:
        """The names of the tools offered to the model in one message request."""
        return [tool["name"] for tool in self.message_requests[index].body.get("tools", [])]

    def _next_reply(self) -> tuple[int, Reply]:
        with self._lock:
            reply = self._script.pop(0) if len(self._script) > 1 else self._script[0]
            self._calls += 1
            return self._calls, reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # A client that connects and sends nothing must not hold up stop() for ever.
            timeout = 10

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                received = Received(
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body if isinstance(body, dict) else {"unparsed": body},
                )
                with fake._lock:
                    fake.requests.append(received)
                route = _route(received)
                if route == COUNT_TOKENS_PATH:
                    self._json(200, {"input_tokens": fake.token_counter(received.body)})
                elif route == MESSAGES_PATH:
                    number, reply = fake._next_reply()
                    self._stream(_events(reply, number, str(received.body.get("model", ""))))
                else:
                    self._not_found()

            def do_GET(self) -> None:
                with fake._lock:
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    fake.requests.append(Received(self.path, headers, {}))
                self._not_found()

            def _not_found(self) -> None:
                message = f"fake_messages_api: no such endpoint {self.command} {self.path}"
                self._json(
                    404,
                    {
                        "type": "error",
                        "error": {"type": "not_found_error", "message": message},
                        "request_id": "req_fake",
                    },
                )

            def _json(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
                payload = "".join(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events
                ).encode("utf-8")
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *arguments: Any) -> None:
                pass  # pytest shows failures; a line per request would only be noise

        return Handler


class _Server(ThreadingHTTPServer):
    # stop() joins every request thread, so nothing of the server outlives its test.
    daemon_threads = False
    block_on_close = True


def estimate_tokens(body: dict[str, Any]) -> int:
    """A rough token count of a request body: a quarter of its size as UTF-8 JSON."""
    size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    return max(1, size // 4)


def request_text(body: dict[str, Any]) -> str:
    """A message request's system prompt blocks and messages as one string, blocks by lines."""
    parts: list[str] = []
    system = body.get("system", "")
    parts.append(_text_of(system))
    for message in body.get("messages", []):
        parts.append(_text_of(message.get("content", "")))
    return "\n".join(part for part in parts if part)


def _route(request: Received) -> str:
    return urlsplit(request.path).path.rstrip("/")


def _blocks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for message in body.get("messages", []):
        content = message.get("content", "")
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, dict))


def _text_of(content: Any) -> str:
    """The text of a content value: a string, or blocks (text, tool results, nested content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(block) for block in content)
    if isinstance(content, dict):
        if "text" in content:
            return str(content["text"])
        if "content" in content:
            return _text_of(content["content"])
        if content.get("type") == "tool_use":
            return json.dumps(content.get("input", {}))
    return ""


def _events(reply: Reply, number: int, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of one streamed reply, in the order the API sends them."""
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_fake_{number}",
                "type": "message",
                "role": "assistant",
                "model": model or "claude-fake",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    if isinstance(reply, ToolUse):
        start: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_fake_{number}",
            "name": reply.name,
            "input": {},
        }
        delta: dict[str, Any] = {
            "type": "input_json_delta",
            "partial_json": json.dumps(reply.input),
        }
        stop_reason = "tool_use"
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply}
        stop_reason = "end_turn"
    yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}
