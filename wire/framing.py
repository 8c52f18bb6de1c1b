"""The base protocol's framing (`Content-Length` headers) for one connection, defensively.

pygls's own loop parses every nested JSON object as a possible message and answers garbage
with silence; this loop parses each body once, answers malformed input with a JSON-RPC
error, refuses oversized bodies without buffering them, and hands only well-formed
messages to the protocol.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from lazy_memory.wire.errors import INVALID_REQUEST, PARSE_ERROR

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""The largest message body accepted; a larger one is read off the wire and refused."""

_DISCARD_CHUNK = 64 * 1024

logger = logging.getLogger(__name__)


class Reader(Protocol):
    """The read half of a connection (asyncio.StreamReader has this shape)."""

    async def readline(self) -> bytes:
        """One line including its newline; empty at end of stream."""
        ...

    async def readexactly(self, n: int) -> bytes:
        """Exactly n bytes, or asyncio.IncompleteReadError at end of stream."""
        ...


class FramingError(Exception):
    """The stream cannot be resynchronised: the connection must close."""


def frame(message: dict[str, Any]) -> bytes:
    """One message with its header, as the base protocol sends it."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_messages(
    reader: Reader,
    deliver: Callable[[dict[str, Any]], None],
    reply_error: Callable[[Any, int, str], None],
    max_bytes: int | None = MAX_MESSAGE_BYTES,
) -> None:
    """Deliver each well-formed message until end of stream; answer the rest with errors.

    A body over max_bytes is refused unread (None: no limit, for a trusted peer's answers).
    Raises FramingError when the headers are beyond repair (the caller closes).
    """
    while True:
        length = await _read_headers(reader)
        if length is None:
            return
        if max_bytes is not None and length > max_bytes:
            if not await _discard(reader, length):
                return
            reply_error(
                None,
                INVALID_REQUEST,
                f"message of {length} bytes refused: the limit is {max_bytes} bytes",
            )
            continue
        try:
            body = await reader.readexactly(length)
        except EOFError:  # IncompleteReadError: the client went away mid-message
            return
        try:
            message = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            reply_error(None, PARSE_ERROR, f"the message is not valid JSON: {error}")
            continue
        if isinstance(message, dict) and "method" in message and message.get("params", {}) is None:
            # `"params": null` is how clients built on older vscode-jsonrpc send LSP's requests
            # that take none (shutdown, exit): the same as params left out, as LSP reads it.
            del message["params"]
        problem = _shape_problem(message)
        if problem:
            message_id = message.get("id") if isinstance(message, dict) else None
            reply_error(_valid_id(message_id), INVALID_REQUEST, problem)
            continue
        deliver(message)


async def _read_headers(reader: Reader) -> int | None:
    """The Content-Length of the next message, or None at a clean end of stream."""
    length: int | None = None
    while True:
        try:
            line = await reader.readline()
        except (ValueError, OSError) as error:  # a header line over the reader's limit
            raise FramingError(f"unreadable header: {error}") from None
        if not line:
            if length is not None:
                logger.info("connection closed inside a message header")
            return None
        if line in (b"\r\n", b"\n"):
            if length is None:
                raise FramingError("a message header without Content-Length")
            return length
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"a bad Content-Length: {value.strip()!r}") from None
            if length < 0:
                raise FramingError(f"a negative Content-Length: {length}")


async def _discard(reader: Reader, length: int) -> bool:
    """Read length bytes and drop them; False if the stream ends first (the client left)."""
    remaining = length
    while remaining:
        chunk = min(remaining, _DISCARD_CHUNK)
        try:
            await reader.readexactly(chunk)
        except EOFError:  # IncompleteReadError: an oversized body that never fully arrived
            return False
        remaining -= chunk
    return True


def _shape_problem(message: object) -> str | None:
    """Why message is not a JSON-RPC 2.0 request, notification or response, or None."""
    if not isinstance(message, dict):
        return "a JSON-RPC message must be a JSON object"
    if message.get("jsonrpc") != "2.0":
        return 'a JSON-RPC message must have "jsonrpc": "2.0"'
    if "id" in message and _valid_id(message["id"]) is None and message["id"] is not None:
        return "a JSON-RPC id must be a string or an integer"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a JSON-RPC method must be a string"
        if "params" in message and not isinstance(message["params"], dict | list):
            return "JSON-RPC params must be an object or an array"
    elif "id" not in message or not ("result" in message or "error" in message):
        return "a JSON-RPC message needs a method, or an id with a result or an error"
    return None


def _valid_id(value: object) -> int | str | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, int | str) else None
