"""A fake Anthropic Messages API on loopback, so tests run the real clients and never the internet.

One server answers both kinds of client the tests run: the anthropic SDK in the summarizers
(a JSON answer), and the real Claude Code CLI (`claude -p`), which POSTs
`/v1/messages?beta=true` with `"stream": true` and reads the answer as server-sent events
(tests/support/anthropic_messages.py builds them, and the other answers). As the real API does, a
request that asks for a stream gets one, any other gets the message as JSON, and an error is
JSON either way.

Claude Code also POSTs `/v1/messages/count_tokens`, answered `{"input_tokens": N}`: N is
`token_counter(body)`, by default a quarter of the request's size in bytes. Claude Code asks
it when an MCP tool result looks large (over about 12,500 tokens at 4 characters a token)
and refuses a result counted over its MCP token cap, so the figure matters. Any other path
is a 404, and a request without a credential a 401, in the API's own error shape.

A test scripts the replies and reads back what the server received::

    def test_something(fake_anthropic: FakeAnthropic) -> None:
        fake_anthropic.script("a summary")                   # every request gets this text
        fake_anthropic.script(error(500), "a summary")       # first a 500, then text
        fake_anthropic.script(lambda request: request.prompt.upper())
        fake_anthropic.script(hang())                        # never answers
        fake_anthropic.script(ToolUse("mcp__lazy__lazy_memory_recall"), "done")
        ...
        assert fake_anthropic.requests[0].body["model"] == "claude-haiku-4-5"
        assert "the marker" in fake_anthropic.requests_text()  # system + messages, request 1
        [result] = fake_anthropic.tool_results()             # tool_result blocks sent back

Replies are used in order and the last one repeats, so one scripted failure also answers
the SDK's retries. A reply is a text answer, a `ToolUse`, a `Reply` (see `error` and `hang`),
or a function from the `Received` request to one of those. Only `/v1/messages` requests take
a reply from the script; `count_tokens` requests are recorded but answered without it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from tests.support.anthropic_messages import (
    DEFAULT_MODEL,
    Answer,
    Received,
    Reply,
    Script,
    ToolResult,
    ToolUse,
    blocks,
    echo,
    error,
    estimate_tokens,
    hang,
    message_body,
    request_text,
    sent_blocks,
    streamed,
    text,
    text_block,
    text_of,
    tool_use_block,
)

__all__ = [
    "COUNT_TOKENS_PATH",
    "DEFAULT_MODEL",
    "FAKE_API_KEY",
    "MESSAGES_PATH",
    "UNREACHABLE_BASE_URL",
    "Answer",
    "FakeAnthropic",
    "Received",
    "Reply",
    "Script",
    "ToolResult",
    "ToolUse",
    "blocks",
    "echo",
    "error",
    "estimate_tokens",
    "hang",
    "request_text",
    "text",
]
"""What tests import from here: the server (its fixtures are in tests/conftest.py), and the
request and answer shapes of tests/support/anthropic_messages.py."""

FAKE_API_KEY = "sk-ant-fake-test-key"
UNREACHABLE_BASE_URL = "http://127.0.0.1:9"
"""Where the SDK points in tests that did not ask for the fake: nothing listens there."""
MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


class FakeAnthropic:
    """The fake server: start() it (or use it as a context manager), script() it, read it."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.token_counter: Callable[[dict[str, Any]], int] = estimate_tokens
        """What count_tokens answers for a request body; replace it to script the count."""
        self._script: list[Script] = []
        self._calls = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        # A short poll keeps stop(), and so every test's teardown, quick.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))

    @property
    def url(self) -> str:
        """The base URL to give a client (it appends /v1/messages)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Script) -> None:
        """Answer the next message requests with replies, in order; the last one repeats."""
        with self._lock:
            self._script = list(replies)

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Release hanging requests, stop serving and close the socket."""
        self._stopping.set()
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
            return [request for request in self.requests if request.route == MESSAGES_PATH]

    def requests_text(self, index: int = 0) -> str:
        """Everything the model was given in one message request: system blocks and messages.

        The first request by default: the one that holds what a session starts with (the
        system prompt, SessionStart hook output, the prompt).
        """
        requests = self.message_requests
        if len(requests) <= index:
            raise AssertionError(
                f"the client sent {len(requests)} message request(s), not {index + 1}"
            )
        return request_text(requests[index].body)

    def tool_results(self) -> list[ToolResult]:
        """Every distinct tool_result block in the message requests, in the order first sent.

        A client resends the whole conversation each turn, so a result appears in every
        later request; it is listed once.
        """
        seen: dict[str, ToolResult] = {}
        for request in self.message_requests:
            for block in sent_blocks(request.body):
                if block.get("type") == "tool_result":
                    result = ToolResult(
                        tool_use_id=str(block.get("tool_use_id", "")),
                        content=text_of(block.get("content", "")),
                        is_error=bool(block.get("is_error", False)),
                    )
                    seen.setdefault(result.tool_use_id, result)
        return list(seen.values())

    def tool_names(self, index: int = 0) -> list[str]:
        """The names of the tools offered to the model in one message request."""
        return [tool["name"] for tool in self.message_requests[index].body.get("tools", [])]

    def _answer(self, request: Received) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.method != "POST" or request.route not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
                return error(
                    404, f"fake_anthropic: no such endpoint {request.method} {request.path}"
                )
            if request.api_key is None:
                return error(401, "fake_anthropic: no credential was sent")
            if request.route == COUNT_TOKENS_PATH:
                counter = self.token_counter
            elif not self._script:
                return error(500, "fake_anthropic: no reply scripted for this request")
            else:
                scripted = self._script.pop(0) if len(self._script) > 1 else self._script[0]
                self._calls += 1
                number = self._calls
        if request.route == COUNT_TOKENS_PATH:
            return Reply(body={"input_tokens": counter(request.body)})
        answer = scripted(request) if callable(scripted) else scripted
        if isinstance(answer, Reply):
            return answer
        if isinstance(answer, ToolUse):
            content, stop_reason = tool_use_block(answer, number), "tool_use"
        else:
            content, stop_reason = text_block(answer), "end_turn"
        model = str(request.body.get("model") or DEFAULT_MODEL)
        message = message_body(f"msg_fake_{number}", model, [content], stop_reason)
        if request.body.get("stream"):
            return streamed(message)
        return Reply(body=message)

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
                self._send(fake._answer(self._received(body)))

            def do_GET(self) -> None:
                self._send(fake._answer(self._received({})))

            def _received(self, body: Any) -> Received:
                return Received(
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body if isinstance(body, dict) else {"unparsed": body},
                    method=self.command,
                )

            def _send(self, reply: Reply) -> None:
                if reply.hang:
                    fake._stopping.wait()
                    self.close_connection = True
                    return
                payload = (
                    reply.body
                    if isinstance(reply.body, bytes)
                    else json.dumps(reply.body).encode("utf-8")
                )
                self.send_response(reply.status)
                for name, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
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
