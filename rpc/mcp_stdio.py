"""The seam between `lazy mcp` and the MCP SDK: the process's stdio, and the server run on it.

Written against the MCP Python SDK (`mcp`) 2.3.0, through its public API only: the
low-level `mcp.server.Server`, run as `mcp.server.stdio`'s docstring shows on the streams
`stdio_server(stdin, stdout)` is given, answers `tools/list` and `tools/call` with the
public `list_tools()` and `call_tool()` of the `MCPServer` that holds the tools
(rpc/mcp_tools.py). Nothing here reaches into an SDK object's private attributes or
modules; a new SDK version is reviewed here first.

stdout is the protocol's alone from the first line of the command: `lazy mcp` keeps the real
stdout descriptor for the protocol and points fd 1 and `sys.stdout` at stderr before it
imports anything (rpc/cli/mcp.py), so a stray print, a library writing to stdout or a child
process lands in the client's log instead of corrupting the framing; `Stdio` writes the
protocol to the descriptor it is given.

The SDK's own streams read stdin in a worker thread that no cancellation stops, and at end of
input it cancels the requests still running: a SIGTERM could end neither quickly nor
cleanly. These streams stop on request instead: no line is passed on after `stop()`, the
requests already passed on get up to DRAIN_SECONDS to be answered, and then the input ends,
so the SDK closes with nothing left to cancel. fd 0 reads /dev/null once claimed, so nothing
else reads the client's bytes.

A line the SDK could not read (garbage, or text with a lone surrogate escape, which a
client's JavaScript emits for an emoji cut in half) would reach its server as an exception
that it only logs: the client's request would wait forever. Such a line is answered here
with a JSON-RPC error, with its id when the line has one, and never passed on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import TYPE_CHECKING, Any, Self, cast

from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from lazy_memory.rpc.server import DRAIN_SECONDS
from lazy_memory.rpc.stdio import stdin_reader

if TYPE_CHECKING:
    import anyio

logger = logging.getLogger(__name__)
_CHUNK = 64 * 1024


async def serve_stdio(tools: MCPServer, stdio: Stdio) -> None:
    """Serve the tools tools holds on stdio until its input ends."""

    async def list_tools(
        context: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=await tools.list_tools())

    async def call_tool(
        context: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await tools.call_tool(params.name, params.arguments or {})
        except MCPError:
            raise
        except Exception as error:  # a ToolError: an unknown tool, or wrong arguments
            if not isinstance(error, ToolError):
                logger.exception("tool %r failed", params.name)
            return CallToolResult(
                content=[TextContent(type="text", text=str(error))], is_error=True
            )

    server: Server[Any] = Server(
        tools.name,
        version=tools.version,
        instructions=tools.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server(*stdio.streams()) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


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
    """stdin as the lines the SDK's transport iterates over, until the end or a stop.

    A line the SDK could not read is answered on output and not passed on.
    """

    def __init__(
        self, reader: asyncio.StreamReader, output: Output, unanswered: Unanswered
    ) -> None:
        self._reader = reader
        self._output = output
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
        while True:
            line = await self._next_line()
            self._unanswered.read(line)
            text = line.decode("utf-8", errors="replace")
            answer = _answer_to_unreadable(text)
            if answer is None:
                return text
            await self._output.write(answer)

    async def _next_line(self) -> bytes:
        """The next line of stdin, with its newline; ends at its end, or drained after a stop."""
        while not self._stopping.is_set():
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            chunk = await self._next_chunk()
            if chunk is None:
                break
            if not chunk:  # end of input: a last line without its newline still counts
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                return line
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
    """The claimed stdin and stdout, as the SDK transport's streams.

    protocol is the real stdout's descriptor, which `lazy mcp` kept for the protocol at its
    first line (rpc/cli/mcp.py claim_stdout); stdin is claimed here: fd 0 reads /dev/null
    from now on, and only the protocol reads the client's bytes.
    """

    def __init__(self, protocol: int) -> None:
        unanswered = Unanswered()
        self.output = Output(protocol, unanswered)
        stdin_fd = os.dup(0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        self.input = Input(stdin_reader(stdin_fd), self.output, unanswered)

    def stop(self) -> None:
        """Stop cleanly: see Input.stop."""
        self.input.stop()

    def streams(self) -> tuple[anyio.AsyncFile[str], anyio.AsyncFile[str]]:
        """The two streams, typed as the SDK's stdio_server takes them.

        The transport only iterates over its input and writes and flushes its output.
        """
        return cast("anyio.AsyncFile[str]", self.input), cast("anyio.AsyncFile[str]", self.output)


def _answer_to_unreadable(line: str) -> str | None:
    """The JSON-RPC error line that answers line if the SDK cannot read it, else None.

    The SDK's transport reads a line with this same adapter.
    """
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as error:
        message_id, code, text = _unreadable(error)
        logger.warning("answered an unreadable message with error %d: %s", code, text)
        answer = JSONRPCError(
            jsonrpc="2.0", id=message_id, error=ErrorData(code=code, message=text)
        )
        return answer.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
    return None


def _unreadable(error: Exception) -> tuple[int | str | None, int, str]:
    """The id (when the line has one), code and message to answer an unreadable line with."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    if not problems or any(problem["type"] == "json_invalid" for problem in problems):
        code, what = PARSE_ERROR, "the message is not valid JSON"
    else:
        code, what = INVALID_REQUEST, "the message is not a JSON-RPC request MCP knows"
    text = f"{what}: {problems[0]['msg'] if problems else error}"
    inputs = [problem.get("input") for problem in problems]
    # A message pydantic parsed comes with it; a line it could not parse comes as text,
    # which Python's own reader may still read (a lone surrogate escape), enough for the id.
    message = next((value for value in inputs if isinstance(value, dict)), None)
    line = next((value for value in inputs if isinstance(value, str)), None)
    if message is None and line is not None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's limit
            message = None
    message_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(message_id, bool) or not isinstance(message_id, int | str):
        message_id = None
    return message_id, code, text


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
