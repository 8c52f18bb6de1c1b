"""`lazy mcp` on its stdin and stdout: the start answered at once, then the tools served.

Two phases, one session (rpc/mcp/protocol.py):

1. **The start**, with the standard library only and blocking reads: `initialize`, `ping` and
   `tools/list` are answered as they come, before anything is imported that the answers do not
   need and before the store is opened. It ends once the tools are listed (the harness now
   knows them), at the first `tools/call`, or at the end of input (a client that only looked).
2. **The tools**, on asyncio: the store is opened and the tools' modules imported at once (in a
   thread, so the loop keeps answering), while the session goes on; each `tools/call` runs as a
   task once the tools are ready, and is answered when it is done. At the end of input the calls
   still running are finished and answered; on SIGTERM no more lines are read, the calls already
   running get up to DRAIN_SECONDS, and the server ends (exit 0). A `notifications/cancelled`
   drops its call's answer (the work, a save perhaps, is not torn midway).

A line that cannot be read is answered with an error (with its id when it has one) and logged;
the server keeps serving.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from lazy_memory.rpc.mcp.protocol import (
    Call,
    McpSession,
    Message,
    Unreadable,
    encode,
    internal_error,
    read_message,
    result,
)
from lazy_memory.rpc.process_stdio import CHUNK, write_all

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

    from lazy_memory.rpc.mcp.tools import McpTools


class McpStdio:
    """The claimed stdin (lines, read blocking at the start, then through asyncio) and stdout."""

    def __init__(self, stdin: int, stdout: int) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._buffer = bytearray()
        self._scanned = 0
        self._reader: asyncio.StreamReader | None = None

    def write(self, message: Message) -> None:
        """Write one message as a line, whole; a client gone away is not an error."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            write_all(self._stdout, encode(message))

    def next_line_blocking(self) -> bytes | None:
        """The next line of stdin, with its newline; None at its end."""
        while (line := self._line()) is None:
            try:
                chunk = os.read(self._stdin, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                return self._last_line()
            self._buffer += chunk
        return line

    async def next_line(self) -> bytes | None:
        """The next line of stdin, read through asyncio from here on; None at its end."""
        if self._reader is None:
            from lazy_memory.rpc.process_stdio import stdin_reader

            self._reader = stdin_reader(self._stdin)
        while (line := self._line()) is None:
            chunk = await self._reader.read(CHUNK)
            if not chunk:
                return self._last_line()
            self._buffer += chunk
        return line

    def _line(self) -> bytes | None:
        newline = self._buffer.find(b"\n", self._scanned)
        if newline < 0:
            self._scanned = len(self._buffer)
            return None
        line = bytes(self._buffer[: newline + 1])
        del self._buffer[: newline + 1]
        self._scanned = 0
        return line

    def _last_line(self) -> bytes | None:
        """What is left at the end of input: a last line without its newline still counts."""
        if not self._buffer:
            return None
        line = bytes(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return line


class Started(NamedTuple):
    """How the start of session ended: with the call that needs the tools (if one came), or at
    the end of input."""

    session: McpSession
    call: Call | None
    ended: bool


def serve_start(session: McpSession, stdio: McpStdio) -> Started:
    """Answer the session's requests until the tools are listed, one is called, or input ends."""
    while (line := stdio.next_line_blocking()) is not None:
        _, answer = _answer(session, line)
        if isinstance(answer, Call):
            return Started(session, answer, ended=False)
        if answer is not None:
            stdio.write(answer)
            if "tools" in answer.get("result", {}):
                return Started(session, None, ended=False)
    return Started(session, None, ended=True)


async def serve_tools(
    stdio: McpStdio, open_tools: Callable[[], Awaitable[McpTools]], started: Started
) -> None:
    """Serve the session, calls included, until the end of input or SIGTERM (see the module)."""
    import asyncio
    import signal

    from lazy_memory.rpc.lifecycle import DRAIN_SECONDS

    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stopping.set)
    session = started.session
    tools = asyncio.ensure_future(open_tools())
    calls = _Calls(stdio, tools)
    if started.call is not None:
        calls.start(started.call)
    stop = asyncio.ensure_future(stopping.wait())
    try:
        while True:
            reading = asyncio.ensure_future(stdio.next_line())
            await asyncio.wait({reading, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not reading.done():
                reading.cancel()
                break
            line = reading.result()
            if line is None:
                break
            message, answer = _answer(session, line)
            if isinstance(answer, Call):
                calls.start(answer)
            elif answer is not None:
                stdio.write(answer)
            elif message is not None and message.get("method") == "notifications/cancelled":
                calls.cancel(message.get("params") or {})
        # Stopped, what runs gets a bounded while; at the end of input every call ends.
        unanswered = await calls.finish(DRAIN_SECONDS if stopping.is_set() else None)
        if unanswered:
            from lazy_memory.engine.wording import counted

            _log().warning(
                "stopping with %s unanswered after %g s",
                counted(unanswered, "request"),
                DRAIN_SECONDS,
            )
    finally:
        stop.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
        if tools.done() and not tools.cancelled() and tools.exception() is None:
            await tools.result().service.aclose()
        else:
            tools.cancel()


class _Calls:
    """The tool calls running, each answered when it is done unless its client cancelled it."""

    def __init__(self, stdio: McpStdio, tools: asyncio.Future[McpTools]) -> None:
        self._stdio = stdio
        self._tools = tools
        self._running: set[asyncio.Task[None]] = set()
        self._wanted: set[Any] = set()

    def start(self, call: Call) -> None:
        """Run call, and answer it when it is done."""
        import asyncio

        self._wanted.add(call.id)
        task = asyncio.ensure_future(self._answer(call))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def cancel(self, params: dict[str, Any]) -> None:
        """A `notifications/cancelled`: its call goes on (a save is not torn), unanswered."""
        request_id = params.get("requestId")
        if isinstance(request_id, int | str):
            self._wanted.discard(request_id)

    async def finish(self, seconds: float | None) -> int:
        """Wait for the calls running, up to seconds (None: until they end); how many are still
        unanswered."""
        import asyncio

        if self._running:
            await asyncio.wait(set(self._running), timeout=seconds)
        return len(self._running)

    async def _answer(self, call: Call) -> None:
        try:
            tools = await self._tools
        except Exception as error:  # a bug: the call still gets an answer, the log the why
            _log().exception("the tools could not be opened")
            outcome = internal_error(error)
        else:
            outcome = await tools.call(call.tool, call.arguments)
        if call.id in self._wanted:
            self._wanted.discard(call.id)
            self._stdio.write(result(call.id, outcome))


def _answer(session: McpSession, line: bytes) -> tuple[Message | None, Message | Call | None]:
    """The message a line holds (None if none), and what answers it: a response, a call to run,
    or nothing."""
    message = read_message(line)
    if isinstance(message, Unreadable):
        _log().warning(
            "answered an unreadable message with error %d: %s",
            message.answer["error"]["code"],
            message.why,
        )
        return None, message.answer
    return message, None if message is None else session.answer(message)


def _log() -> Any:
    import logging

    return logging.getLogger(__name__)
