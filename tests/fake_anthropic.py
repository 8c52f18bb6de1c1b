"""A fake Anthropic Messages API on loopback, so tests run the real clients and never the internet.

One server answers both kinds of client the tests run: the anthropic SDK in the summarizers
(a JSON answer), and the real Claude Code CLI (`claude -p`), which POSTs
`/v1/messages?beta=true` with `"stream": true` and reads the answer as server-sent events:
`message_start` (a message with empty content), then for each content block
`content_block_start`, `content_block_delta` (`text_delta`, or `input_json_delta` carrying
the tool input as a JSON string) and `content_block_stop`, then `message_delta` (with the
`stop_reason`) and `message_stop`. As the real API does, a request that asks for a stream
gets one, any other gets the message as JSON, and an error is JSON either way.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import pytest

FAKE_API_KEY = "sk-ant-fake-test-key"
UNREACHABLE_BASE_URL = "http://127.0.0.1:9"
"""Where the SDK points in tests that did not ask for the fake: nothing listens there."""
MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
DEFAULT_MODEL = "claude-haiku-4-5"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Received:
    """One request the fake server got: its path, headers (lower-case names), JSON body, verb."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    method: str = "POST"

    @property
    def route(self) -> str:
        """The path without its query string or a trailing slash: `/v1/messages`."""
        return urlsplit(self.path).path.rstrip("/")

    @property
    def api_key(self) -> str | None:
        """The credential sent: `x-api-key`, or the bearer token newer SDKs send instead."""
        bearer = self.headers.get("authorization", "").removeprefix("Bearer ")
        return self.headers.get("x-api-key") or bearer or None

    @property
    def prompt(self) -> str:
        """The text of the last user message."""
        content = self.body["messages"][-1]["content"]
        if isinstance(content, str):
            return content
        return "".join(block["text"] for block in content if block["type"] == "text")


@dataclass(frozen=True)
class Reply:
    """A scripted HTTP answer: a JSON body, or raw bytes; a `hang` answers nothing at all."""

    status: int = 200
    body: dict[str, Any] | bytes = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


@dataclass(frozen=True)
class ToolUse:
    """A scripted reply that calls one tool: its full name (`mcp__server__tool`) and input."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    """A `tool_result` block a client sent back: the call it answers, its text, is_error."""

    tool_use_id: str
    content: str
    is_error: bool


Answer = str | ToolUse | Reply
Script = Answer | Callable[[Received], Answer]


def text(answer: str, model: str = DEFAULT_MODEL, stop_reason: str = "end_turn") -> Reply:
    """A successful Messages API answer whose one text block is answer."""
    return Reply(body=_message("msg_fake", model, [_text_block(answer)], stop_reason))


def blocks(content: list[dict[str, Any]], model: str = DEFAULT_MODEL) -> Reply:
    """A successful answer with exactly these content blocks (none, or several)."""
    return Reply(body=_message("msg_fake", model, content, "end_turn"))


def error(status: int, message: str | None = None) -> Reply:
    """An Anthropic-style error answer; a 429 says `retry-after: 0` (the SDK's backoff applies)."""
    error_type = _ERROR_TYPES.get(status, "api_error")
    return Reply(
        status=status,
        body={
            "type": "error",
            "error": {"type": error_type, "message": message or f"fake {error_type}"},
            "request_id": "req_fake",
        },
        headers={"retry-after": "0"} if status == 429 else {},
    )


def hang() -> Reply:
    """No answer at all until the server stops, to exercise client timeouts."""
    return Reply(hang=True)


def echo(request: Received) -> str:
    """Answer with the prompt itself."""
    return request.prompt


def estimate_tokens(body: dict[str, Any]) -> int:
    """A rough token count of a request body: a quarter of its size as UTF-8 JSON."""
    size = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    return max(1, size // 4)


def request_text(body: dict[str, Any]) -> str:
    """A message request's system prompt blocks and messages as one string, blocks by lines."""
    parts = [_text_of(body.get("system", ""))]
    parts.extend(_text_of(message.get("content", "")) for message in body.get("messages", []))
    return "\n".join(part for part in parts if part)


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
            content, stop_reason = _tool_use_block(answer, number), "tool_use"
        else:
            content, stop_reason = _text_block(answer), "end_turn"
        model = str(request.body.get("model") or DEFAULT_MODEL)
        message = _message(f"msg_fake_{number}", model, [content], stop_reason)
        if request.body.get("stream"):
            return _streamed(message)
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


def _text_block(answer: str) -> dict[str, Any]:
    return {"type": "text", "text": answer}


def _tool_use_block(call: ToolUse, number: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake_{number}",
        "name": call.name,
        "input": call.input,
    }


def _message(
    message_id: str, model: str, content: list[dict[str, Any]], stop_reason: str
) -> dict[str, Any]:
    answer_length = sum(len(block.get("text", "")) for block in content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": max(1, answer_length // 4)},
    }


def _streamed(message: dict[str, Any]) -> Reply:
    """message as the server-sent events of a streamed answer, in the order the API sends them."""
    payload = "".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in _events(message)
    ).encode("utf-8")
    return Reply(
        body=payload, headers={"content-type": "text/event-stream", "cache-control": "no-cache"}
    )


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    started = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    started["usage"] = {**message["usage"], "output_tokens": 1}
    yield {"type": "message_start", "message": started}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield {"type": "content_block_start", "index": index, "content_block": start}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


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


@pytest.fixture(autouse=True)
def no_real_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test off the real API: no credential, and an endpoint where nothing listens."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE_BASE_URL)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake server, with ANTHROPIC_BASE_URL and a fake ANTHROPIC_API_KEY set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
        yield fake
