"""The Anthropic Messages API's requests and answers, as fake_anthropic.py speaks them.

A request the fake server received (`Received`), and what a test scripts it to answer: a
`Reply` (`text`, `blocks`, `error`, `hang`), a `ToolUse`, or `echo`. A message answer is JSON,
or, for a request that asks for a stream, the server-sent events the real Claude Code CLI
(`claude -p`) reads: `message_start` (a message with empty content), then for each content
block `content_block_start`, `content_block_delta` (`text_delta`, or `input_json_delta`
carrying the tool input as a JSON string) and `content_block_stop`, then `message_delta`
(with the `stop_reason`) and `message_stop`. And what a client sent: the `ToolResult` blocks,
a request's text, a rough token count of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

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
    return Reply(body=message_body("msg_fake", model, [text_block(answer)], stop_reason))


def blocks(content: list[dict[str, Any]], model: str = DEFAULT_MODEL) -> Reply:
    """A successful answer with exactly these content blocks (none, or several)."""
    return Reply(body=message_body("msg_fake", model, content, "end_turn"))


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
    parts = [text_of(body.get("system", ""))]
    parts.extend(text_of(message.get("content", "")) for message in body.get("messages", []))
    return "\n".join(part for part in parts if part)


def text_block(answer: str) -> dict[str, Any]:
    return {"type": "text", "text": answer}


def tool_use_block(call: ToolUse, number: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake_{number}",
        "name": call.name,
        "input": call.input,
    }


def message_body(
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


def streamed(message: dict[str, Any]) -> Reply:
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


def sent_blocks(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for message in body.get("messages", []):
        content = message.get("content", "")
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, dict))


def text_of(content: Any) -> str:
    """The text of a content value: a string, or blocks (text, tool results, nested content)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(block) for block in content)
    if isinstance(content, dict):
        if "text" in content:
            return str(content["text"])
        if "content" in content:
            return text_of(content["content"])
        if content.get("type") == "tool_use":
            return json.dumps(content.get("input", {}))
    return ""
