"""Where the daemon listens: a private unix socket or a TCP port, with or without TLS.

The daemon accepts connections itself (`Listener`) rather than through asyncio's server,
which accepts as many at a time as its listen backlog holds (100) and gives the kernel's
queue no more room than that. Here the kernel may queue BACKLOG connections, so that a crowd
waiting to be accepted does not make the kernel drop a client's connection attempt (which it
would retry only a second later), while each turn of the event loop accepts only as many as
the daemon says (`FrontDoor.accepts_now`), so that a connection whose `initialize`
takes a few turns to be read and answered sees far fewer accepted after it by then than
may wait for a token (the longest waiting is dropped first to make room). Also who is at
the other end of a connection, for the log.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import os
import socket
import ssl
import stat
import struct
from collections.abc import Callable
from pathlib import Path

from lazy_memory.adapters.address import Address
from lazy_memory.engine.errors import InvalidConfig
from lazy_memory.rpc.jsonrpc.connection_limits import ConnectionLimits

PROBE_TIMEOUT_SECONDS = 5.0
"""How long a connect to a socket file may take to tell a live daemon from a stale file."""
BACKLOG = 4096
"""Connections the kernel may queue until the daemon accepts them (Linux caps it at
net.core.somaxconn, 4096 by default)."""
PAUSE_WHEN_OUT_OF_SOCKETS_SECONDS = 0.1
"""How long accepting pauses when the process or system has no descriptor to spare."""
PAUSE_WHEN_FULL_SECONDS = 0.01
"""How long accepting pauses when the daemon takes none now (it drops to make room only so
fast): the kernel queues the connections meanwhile."""
_OUT_OF_SOCKETS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


logger = logging.getLogger(__name__)


def _bind_unix(path: Path) -> socket.socket:
    """A socket bound at path and private to this user, once a stale one is cleared away."""
    _remove_stale_socket(path)
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        bound.bind(str(path))
        # Private before it listens: until then every connect is refused, so there is no
        # moment when another user could get in.
        os.chmod(path, 0o600)
    except OSError as error:
        bound.close()
        raise InvalidConfig(f"cannot listen on unix:{path}: {error.strerror or error}") from None
    return bound


def _remove_stale_socket(path: Path) -> None:
    """Remove a socket file nothing listens on (a daemon that was killed); refuse a live one."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise InvalidConfig(f"cannot listen on unix:{path}: a file that is not a socket is there")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(PROBE_TIMEOUT_SECONDS)
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)
            logger.info("removed the stale socket %s", path)
            return
        except OSError as error:
            raise InvalidConfig(f"cannot listen on unix:{path}: {error}") from None
    raise InvalidConfig(f"cannot listen on unix:{path}: another daemon is listening there")


class Listener:
    """Accepts connections on a listening socket, a few each turn of the event loop, each
    with a new protocol() (over TLS, once its TLS handshake is done)."""

    def __init__(
        self,
        listening: socket.socket,
        protocol: Callable[[], asyncio.Protocol],
        ssl_context: ssl.SSLContext | None,
        limits: ConnectionLimits,
        per_turn: Callable[[int], int],
    ) -> None:
        self._socket = listening
        self._protocol = protocol
        self._per_turn = per_turn
        self._ssl_context = ssl_context
        self._limits = limits
        self._starting: dict[asyncio.Task[None], None] = {}
        """Connections being set up, oldest first: over TLS, each is a handshake."""
        self._loop = asyncio.get_running_loop()
        listening.setblocking(False)
        listening.listen(BACKLOG)
        self._loop.add_reader(listening.fileno(), self._accept_some)

    def close(self) -> None:
        """Stop accepting, and drop the connections still being set up."""
        self._loop.remove_reader(self._socket.fileno())
        self._socket.close()
        for starting in self._starting:
            starting.cancel()

    def _accept_some(self) -> None:
        count = self._per_turn(len(self._starting))
        if count == 0:
            self._pause(PAUSE_WHEN_FULL_SECONDS)
            return
        for _ in range(count):
            try:
                connected, _ = self._socket.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as error:
                if error.errno not in _OUT_OF_SOCKETS:
                    raise
                logger.error("cannot accept a connection: %s; pausing", error.strerror)
                self._pause(PAUSE_WHEN_OUT_OF_SOCKETS_SECONDS)
                return
            connected.setblocking(False)
            # Handshakes that would outnumber the connections that may wait for a token make
            # room as those do, and no faster (accepts_now): the oldest is dropped.
            if len(self._starting) >= self._limits.max_unauthenticated:
                next(iter(self._starting)).cancel()
            starting = asyncio.ensure_future(self._start(connected))
            self._starting[starting] = None
            starting.add_done_callback(self._started)

    def _pause(self, seconds: float) -> None:
        self._loop.remove_reader(self._socket.fileno())
        self._loop.call_later(seconds, self._resume)

    def _resume(self) -> None:
        if self._socket.fileno() >= 0:
            self._loop.add_reader(self._socket.fileno(), self._accept_some)

    def _started(self, starting: asyncio.Task[None]) -> None:
        self._starting.pop(starting, None)

    async def _start(self, connected: socket.socket) -> None:
        # A TLS handshake comes before accept, so before the handshake timeout starts: it
        # gets the same time of its own (asyncio's default is a minute).
        handshake = None if self._ssl_context is None else self._limits.handshake_seconds
        try:
            await self._loop.connect_accepted_socket(
                self._protocol, connected, ssl=self._ssl_context, ssl_handshake_timeout=handshake
            )
        except (OSError, ssl.SSLError, TimeoutError) as error:
            connected.close()
            logger.debug("a connection failed before it was set up: %s", error)
        except asyncio.CancelledError:
            connected.close()
            raise


async def listen(
    address: Address,
    protocol: Callable[[], asyncio.Protocol],
    ssl_context: ssl.SSLContext | None,
    limits: ConnectionLimits,
    per_turn: Callable[[int], int],
) -> tuple[Listener, Address]:
    """The listener and the address it really listens on (port 0 made real); it accepts
    per_turn(connections being set up) connections at most in each turn of the loop."""
    if address.path is not None:
        return Listener(_bind_unix(address.path), protocol, None, limits, per_turn), address
    if ssl_context is None and not _is_loopback(address.host):
        logger.warning(
            "listening on %s without TLS: tokens and records cross the network in clear text "
            "(use --tls-cert and --tls-key)",
            address,
        )
    try:
        family = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM)[0][0]
        bound = socket.create_server((address.host, address.port), family=family)
    except OSError as error:
        raise InvalidConfig(f"cannot listen on {address}: {error.strerror or error}") from None
    # Clients name a TLS daemon tls:HOST:PORT, whichever form it was started with.
    scheme = "tcp" if ssl_context is None else "tls"
    port = bound.getsockname()[1]
    listener = Listener(bound, protocol, ssl_context, limits, per_turn)
    return listener, Address(scheme, host=address.host, port=port)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def peer(writer: asyncio.StreamWriter) -> str:
    """Who connected: host and port over TCP, process and user over a unix socket."""
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple):
        return str(Address("tcp", host=peer[0], port=peer[1])).removeprefix("tcp:")
    connected = writer.get_extra_info("socket")
    if connected is None or not hasattr(socket, "SO_PEERCRED"):
        return "a unix socket"
    credentials = connected.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", credentials)
    return f"pid {pid} (uid {uid}) on a unix socket"
