"""A fake Anthropic Messages API on loopback, so tests run the real SDK and never the internet.

A test scripts the replies and reads back what the server received::

    def test_something(fake_anthropic: FakeAnthropic) -> None:
        fake_anthropic.script("a summary")                   # every request gets this text
        fake_anthropic.script(error(500), "a summary")       # first a 500, then text
        fake_anthropic.script(lambda request: request.prompt.upper())
        fake_anthropic.script(hang())                        # never answers
        ...
        assert fake_anthropic.requests[0].body["model"] == "claude-haiku-4-5"

Replies are used in order and the last one repeats, so one scripted failure also answers
the SDK's retries. A reply is a text answer, a `Reply` (see `error` and `hang`), or a
function from the `Received` request to either.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAKE_API_KEY = "sk-ant-fake-test-key"
UNREACHABLE_BASE_URL = "http://127.0.0.1:9"
"""Where the SDK points in tests that did not ask for the fake: nothing listens there."""

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
    """One request the fake server got: its path, headers (lower-case names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

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


Script = str | Reply | Callable[[Received], "str | Reply"]


def text(answer: str, model: str = "claude-haiku-4-5", stop_reason: str = "end_turn") -> Reply:
    """A successful Messages API answer whose one text block is answer."""
    return Reply(body=_message(model, [{"type": "text", "text": answer}], stop_reason))


def blocks(content: list[dict[str, Any]], model: str = "claude-haiku-4-5") -> Reply:
    """A successful answer with exactly these content blocks (none, or several)."""
    return Reply(body=_message(model, content, "end_turn"))


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


class FakeAnthropic:
    """The fake server: start() it, script() its replies, read its requests, stop() it."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: list[Script] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), self._handler_class())
        # A short poll keeps stop(), and so every test's teardown, quick.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))

    @property
    def url(self) -> str:
        """The base URL to give the SDK (it appends /v1/messages)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Script) -> None:
        """Answer the next requests with replies, in order; the last one repeats."""
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

    def _answer(self, request: Received) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.path != "/v1/messages":
                return error(404, f"fake_anthropic: no such endpoint {request.path}")
            if request.api_key is None:
                return error(401, "fake_anthropic: no credential was sent")
            if not self._script:
                return error(500, "fake_anthropic: no reply scripted for this request")
            scripted = self._script.pop(0) if len(self._script) > 1 else self._script[0]
        if callable(scripted):
            scripted = scripted(request)
        if isinstance(scripted, str):
            return text(scripted, model=request.body.get("model", "claude-haiku-4-5"))
        return scripted

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # A client that connects and sends nothing must not hold up stop() for ever.
            timeout = 10

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                received = Received(
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=json.loads(self.rfile.read(length) or b"{}"),
                )
                reply = fake._answer(received)
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


def _message(model: str, content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    answer_length = sum(len(block.get("text", "")) for block in content)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": max(1, answer_length // 4)},
    }


@pytest.fixture(autouse=True)
def no_real_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test off the real API: no credential, and an endpoint where nothing listens."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE_BASE_URL)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake server, with ANTHROPIC_BASE_URL and a fake ANTHROPIC_API_KEY set."""
    fake = FakeAnthropic()
    fake.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
    try:
        yield fake
    finally:
        fake.stop()
