"""`lazy mcp`'s standard input and output, handed to the MCP SDK's stdio transport.

The SDK's own streams read stdin in a worker thread that no cancellation stops, and at end of
input it cancels the requests still running: a SIGTERM could end neither quickly nor
cleanly. These streams stop on request instead: no line is passed on after `stop()`, the
requests already passed on get up to DRAIN_SECONDS to be answered, and then the input ends,
so the SDK closes with nothing left to cancel. They claim the descriptors as the SDK would:
fd 0 reads /dev/null and fd 1 writes to stderr, so nothing else reads the client's bytes or
writes into the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import TYPE_CHECKING, Any, Self, cast

from lazy_memory.rpc.server import DRAIN_SECONDS
from lazy_memory.rpc.stdio import stdin_reader, take_stdout

if TYPE_CHECKING:
    import anyio

logger = logging.getLogger(__name__)
_CHUNK = 64 * 1024


class Unanswered:
    """The ids of the client's requests read and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.none = asyncio.Event()
        self.none.set()

    def read(self, line: bytes) -> None:
        """Note a request the client sent (a cancel notification answers its request)."""
        for message in _messages(line):
            if "method" in message and "id" in message:
                self.ids.add(_key(message["id"]))
            elif message.get("method") == "notifications/cancelled":
                params = message.get("params")
                if isinstance(params, dict):
                    self.ids.discard(_key(params.get("requestId")))
        if self.ids:
            self.none.clear()
        else:
            self.none.set()

    def written(self, line: str) -> None:
        """Note an answer the server sent."""
        for message in _messages(line.encode("utf-8", errors="replace")):
            if "method" not in message and "id" in message:
                self.ids.discard(_key(message["id"]))
        if not self.ids:
            self.none.set()


class Input:
    """stdin as the lines the SDK's transport iterates over, until the end or a stop."""

    def __init__(self, reader: asyncio.StreamReader, unanswered: Unanswered) -> None:
        self._reader = reader
        self._unanswered = unanswered
        self._buffer = bytearray()
        self._scanned = 0
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Pass no more lines on; end once those passed on are answered (or time is up)."""
        self._stopping.set()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        while not self._stopping.is_set():
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                self._scanned = 0
                self._unanswered.read(line)
                return line.decode("utf-8", errors="replace")
            self._scanned = len(self._buffer)
            chunk = await self._next_chunk()
            if chunk is None:
                break
            if not chunk:  # end of input: a last line without its newline still counts
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                self._unanswered.read(line)
                return line.decode("utf-8", errors="replace")
            self._buffer += chunk
        try:
            await asyncio.wait_for(self._unanswered.none.wait(), DRAIN_SECONDS)
        except TimeoutError:
            logger.warning(
                "stopping with %d request(s) unanswered after %g s",
                len(self._unanswered.ids),
                DRAIN_SECONDS,
            )
        raise StopAsyncIteration

    async def _next_chunk(self) -> bytes | None:
        """The next bytes of stdin (empty at its end), or None once stopping."""
        reading = asyncio.ensure_future(self._reader.read(_CHUNK))
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if reading.done():
            return reading.result()
        reading.cancel()  # what it had not read stays in the reader's buffer, unread
        with contextlib.suppress(asyncio.CancelledError):
            await reading
        return None


class Output:
    """The protocol's stdout, written as the SDK's transport does: a line, then a flush."""

    def __init__(self, fd: int, unanswered: Unanswered) -> None:
        self._fd = fd
        self._unanswered = unanswered

    async def write(self, text: str) -> None:
        """Write one message line whole (blocking, as the engine's stdio does)."""
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(self._fd, view) :]
        self._unanswered.written(text)

    async def flush(self) -> None:
        """Nothing to flush: every write went straight to the descriptor."""


class Stdio:
    """The claimed stdin and stdout, as the SDK transport's streams."""

    def __init__(self) -> None:
        unanswered = Unanswered()
        stdin_fd = os.dup(0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        self.input = Input(stdin_reader(stdin_fd), unanswered)
        self.output = Output(take_stdout(), unanswered)

    def stop(self) -> None:
        """Stop cleanly: see Input.stop."""
        self.input.stop()

    def streams(self) -> tuple[anyio.AsyncFile[str], anyio.AsyncFile[str]]:
        """The two streams, typed as the SDK's stdio_server takes them.

        The transport only iterates over its input and writes and flushes its output.
        """
        return cast("anyio.AsyncFile[str]", self.input), cast("anyio.AsyncFile[str]", self.output)


def _messages(line: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages a line holds (a batch is a list), none if it is not JSON."""
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError):
        return []
    items = parsed if isinstance(parsed, list) else [parsed]
    return [item for item in items if isinstance(item, dict)]


def _key(message_id: Any) -> Any:
    """An id as a set member (a malformed one, such as a list, cannot be one)."""
    return message_id if isinstance(message_id, int | str) else repr(message_id)
