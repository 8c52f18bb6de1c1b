"""What a daemon client may take: time to present its token, time idle, and a place at all.

A connection must complete `initialize` with a valid token within the handshake timeout,
and until it has, a message may be a few hundred KB at most (an `initialize` is a few KB),
so a crowd of strangers cannot make the daemon buffer megabytes each. An initialized
connection is closed once the idle timeout has passed since the client's last message or
last answer with none of its requests running. Any message counts, so a client that only
listens for `lazy/memory/changed` keeps its connection by sending a notification now and
then (an unknown `$/` notification, such as `$/lazy/keepAlive`, is ignored); the remote
backend instead reconnects when it next needs the daemon. How many connections a daemon
holds, with a token and without, is rpc/jsonrpc/front_door.py's; a connection it refuses is sent why
and ended by `see_out`. Once connections close, their memory is handed back
(`release_memory`).
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lazy_memory.adapters.config import (
    DEFAULT_HANDSHAKE_TIMEOUT_SECONDS,
    DEFAULT_IDLE_TIMEOUT_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS,
)
from lazy_memory.wire.errors import SERVER_ERROR
from lazy_memory.wire.framing import FramingError, frame

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings
    from lazy_memory.rpc.jsonrpc.server import EngineServer

MAX_UNAUTHENTICATED_MESSAGE_BYTES = 256 * 1024
"""The largest message a connection may send before `initialize` has granted it a token."""
TOO_MANY_CONNECTIONS = SERVER_ERROR
"""The code of the one message a connection refused or dropped gets before it is closed."""
REFUSAL_LINGER_SECONDS = 2.0
"""How long a refused connection is kept open to take (and drop) what its client sends."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The daemon's limits on each connection and on how many it holds at once."""

    handshake_seconds: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS
    idle_seconds: float = DEFAULT_IDLE_TIMEOUT_SECONDS
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    """Connections with a valid token."""
    max_unauthenticated: int = DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS
    """Connections still waiting to present one."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        """The limits `[engine]` in lazy.toml sets."""
        return cls(
            handshake_seconds=settings.handshake_timeout_seconds,
            idle_seconds=settings.idle_timeout_seconds,
            max_connections=settings.max_connections,
            max_unauthenticated=settings.max_unauthenticated_connections,
        )


@dataclass(frozen=True)
class FirstMessage:
    """What a connection sent first: its first message's bytes, headers and body, or as
    much as came before the stream ended or broke (then error says how)."""

    data: bytes
    error: Exception | None = None


async def first_message(reader: asyncio.StreamReader) -> FirstMessage:
    """Read a connection's first message whole, before anything is built for it.

    A server costs a few milliseconds and 25 KB: a client that trickles its first message
    a byte at a time never gets one. Anything odd (no Content-Length, a body over what a
    stranger may send) ends the read early; the framing then reports it, as for any message.
    """
    head: list[bytes] = []
    try:
        while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
            head.append(line)
        head.append(line)
        length = _content_length(head)
        if not line or length is None or length > MAX_UNAUTHENTICATED_MESSAGE_BYTES:
            return FirstMessage(b"".join(head))
        return FirstMessage(b"".join(head) + await reader.readexactly(length))
    except asyncio.IncompleteReadError as ended:
        return FirstMessage(b"".join(head) + ended.partial)
    except (ValueError, OSError) as error:  # a line over the stream's limit, a reset
        return FirstMessage(b"".join(head), error)


def _content_length(head: list[bytes]) -> int | None:
    for line in head:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


class GuardedReader:
    """A connection's reader: its first message again, then the stream; a large message is
    refused until the client has a token."""

    def __init__(
        self, reader: asyncio.StreamReader, server: EngineServer, first: FirstMessage
    ) -> None:
        self._reader = reader
        self._server = server
        self._replay = first.data
        self._error = first.error

    async def readline(self) -> bytes:
        """One header line (the stream's limit bounds each)."""
        if self._replay:
            line, newline, self._replay = self._replay.partition(b"\n")
            return line + newline
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        """n bytes, unless n is more than a stranger may send (FramingError: close)."""
        if n > MAX_UNAUTHENTICATED_MESSAGE_BYTES and self._server.service is None:
            raise FramingError(
                f"a message of {n} bytes before initialize: the limit is "
                f"{MAX_UNAUTHENTICATED_MESSAGE_BYTES} bytes until a valid token is presented"
            )
        replayed, self._replay = self._replay[:n], self._replay[n:]
        if len(replayed) == n:
            return replayed
        return replayed + await self._reader.readexactly(n - len(replayed))


def see_out(
    writer: asyncio.StreamWriter, why: str, ended: Callable[[asyncio.BaseTransport], None]
) -> None:
    """Send a refused connection one error saying why, then end it so that the client reads it;
    ended gets its transport once its socket is closed.

    A socket closed with its client's bytes unread (the `initialize` a client sends as soon as
    it connects) is reset, and so is a write after the close: either way the client's
    transport fails before it has read the message. So the sending side is shut (the client
    reads the message, then its end), and what the client sends is dropped until it closes or
    REFUSAL_LINGER_SECONDS have passed. No task and no stream stay behind: a crowd refused
    holds only its sockets. TLS cannot shut one side: it is closed at once.
    """
    error = {"code": TOO_MANY_CONNECTIONS, "message": why}
    writer.write(frame({"jsonrpc": "2.0", "id": None, "error": error}))
    linger = 0.0  # TLS: closed at the next turn, after what is buffered (the message)
    gone = False
    if writer.can_write_eof():
        try:
            writer.write_eof()
            linger = REFUSAL_LINGER_SECONDS
        except OSError:  # the client has reset the connection: nobody is left to tell
            gone = True
    writer.transport.set_protocol(_Dropping(writer.transport, ended, linger))
    if gone:
        writer.transport.abort()


def seen_out(writer: asyncio.StreamWriter) -> bool:
    """True once writer's connection was handed to `see_out`, which closes it."""
    return isinstance(writer.transport.get_protocol(), _Dropping)


class _Dropping(asyncio.Protocol):
    """A refused connection's protocol once its message is sent: what the client sends is
    dropped, and its end, or the linger's, closes the socket."""

    def __init__(
        self,
        transport: asyncio.BaseTransport,
        ended: Callable[[asyncio.BaseTransport], None],
        linger: float,
    ) -> None:
        self._transport = transport
        self._ended = ended
        self._closing = asyncio.get_running_loop().call_later(linger, transport.close)

    def data_received(self, data: bytes) -> None:
        """Dropped: nothing a refused client says is read."""

    def eof_received(self) -> bool:
        return False  # the client has ended its side: close

    def connection_lost(self, exc: Exception | None) -> None:
        self._closing.cancel()
        self._ended(self._transport)


def handshake_timed_out(limits: ConnectionLimits) -> str:
    """Why a connection that did not initialize in time is closed."""
    return (
        f"no initialize with a valid token within {limits.handshake_seconds:g} s "
        "([engine] handshake_timeout_seconds)"
    )


async def idled_out(server: EngineServer, limits: ConnectionLimits) -> str:
    """Wait until an initialized connection has been idle too long; say so."""
    last_busy = 0.0
    while True:
        now = time.monotonic()
        # A request that runs for long (a compaction) is not idleness, nor is waiting for it.
        if server.busy:
            last_busy = now
        remaining = max(server.last_active, last_busy) + limits.idle_seconds - now
        if remaining <= 0:
            return f"idle for {limits.idle_seconds:g} s ([engine] idle_timeout_seconds)"
        await asyncio.sleep(remaining)


def freeze_what_lasts(warm_up: Callable[[], object]) -> None:
    """Leave what the daemon holds for its whole life out of every garbage collection.

    A full collection walks every object the collector tracks: in a daemon, the tens of
    thousands that its imports made (pygls, lsprotocol, pydantic), about 90 ms of walking
    here, which every client waited through each time a crowd's churn set one off. warm_up
    makes what the first connection would import; what it builds is collected, then the
    rest, alive until the daemon stops, is frozen (gc.freeze).
    """
    warm_up()
    gc.collect()
    gc.freeze()


def release_memory() -> None:
    """Free what closed connections left in reference cycles, and give the pages back."""
    # A connection's server is a web of cycles (server, protocol, handlers) that only the
    # cyclic collector frees, and a daemon left idle allocates too little to ever run it.
    gc.collect()
    # What they held in the C heap stays with the process unless glibc is asked: 250
    # initialized clients that left kept about 28 MB without this, 7 MB with it.
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    return trim
