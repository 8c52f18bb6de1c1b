"""What a daemon client may take: time to present its token, time idle, and a place at all.

A connection must complete `initialize` with a valid token within the handshake timeout,
and until it has, a message may be a few hundred KB at most (an `initialize` is a few KB),
so a crowd of strangers cannot make the daemon buffer megabytes each. An initialized
connection is closed once the idle timeout has passed since the client's last message or
last answer with none of its requests running. Any message counts, so a client that only
listens for `lazy/memory/changed` keeps its connection by sending a notification now and
then (an unknown `$/` notification, such as `$/lazy/keepAlive`, is ignored); the remote
backend instead reconnects when it next needs the daemon. A daemon serves at most
max_connections at once and refuses one more as soon as it is accepted (`see_out`). Once
connections close, their memory is handed back (`release_memory`).
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
)
from lazy_memory.engine.wording import counted
from lazy_memory.wire.errors import SERVER_ERROR
from lazy_memory.wire.framing import FramingError, frame

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings
    from lazy_memory.rpc.server import EngineServer

MAX_UNAUTHENTICATED_MESSAGE_BYTES = 256 * 1024
"""The largest message a connection may send before `initialize` has granted it a token."""
TOO_MANY_CONNECTIONS = SERVER_ERROR
"""The code of the one message a connection over the cap gets before it is closed."""
REFUSAL_LINGER_SECONDS = 2.0
"""How long a refused connection is kept open to take (and drop) what its client sends."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The daemon's limits on each connection and on how many it serves at once."""

    handshake_seconds: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS
    idle_seconds: float = DEFAULT_IDLE_TIMEOUT_SECONDS
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        """The limits `[engine]` in lazy.toml sets."""
        return cls(
            handshake_seconds=settings.handshake_timeout_seconds,
            idle_seconds=settings.idle_timeout_seconds,
            max_connections=settings.max_connections,
        )


async def first_line(
    reader: asyncio.StreamReader, limits: ConnectionLimits
) -> bytes | Exception | None:
    """The connection's first line, or why it could not be read; None if none came in time.

    Nothing is built for a connection until it speaks: a silent socket costs a few KB, not
    the 25 KB of a server.
    """
    try:
        async with asyncio.timeout(limits.handshake_seconds):
            return await reader.readline()
    except TimeoutError:
        return None
    except (ValueError, OSError) as error:  # the framing reports it, as for any line
        return error


class GuardedReader:
    """A connection's reader that refuses a large message until the client has a token."""

    def __init__(
        self, reader: asyncio.StreamReader, server: EngineServer, first: bytes | Exception
    ) -> None:
        self._reader = reader
        self._server = server
        self._first: bytes | Exception | None = first

    async def readline(self) -> bytes:
        """One header line, the first one already read (the stream's limit bounds each)."""
        first, self._first = self._first, None
        if isinstance(first, Exception):
            raise first
        if first is not None:
            return first
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        """n bytes, unless n is more than a stranger may send (FramingError: close)."""
        if n > MAX_UNAUTHENTICATED_MESSAGE_BYTES and self._server.service is None:
            raise FramingError(
                f"a message of {n} bytes before initialize: the limit is "
                f"{MAX_UNAUTHENTICATED_MESSAGE_BYTES} bytes until a valid token is presented"
            )
        return await self._reader.readexactly(n)


def at_the_cap(limits: ConnectionLimits) -> str:
    """Why a connection over the cap is refused."""
    open_now = counted(limits.max_connections, "connection")
    return f"{open_now} open, the limit ([engine] max_connections)"


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
    if writer.can_write_eof():
        writer.write_eof()
        linger = REFUSAL_LINGER_SECONDS
    writer.transport.set_protocol(_Dropping(writer.transport, ended, linger))


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


async def outstayed(server: EngineServer, limits: ConnectionLimits, accepted: float) -> str:
    """Wait until the connection accepted then (monotonic) outstays a limit; say which."""
    await asyncio.sleep(max(0.0, accepted + limits.handshake_seconds - time.monotonic()))
    if server.service is None:
        return handshake_timed_out(limits)
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
