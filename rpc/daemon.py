"""The engine daemon: one process serving many clients on a unix socket or TCP, with tokens.

Every connection gets its own server (`build_server`) over the one shared storage. Its
identity comes from the token it presents in `initialize` (`initializationOptions.token`),
checked against the token file at that moment, so a revoked token is refused from the next
connection on without a restart. A client that sends garbage, disconnects or crashes its
handler closes only its own connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import socket
import ssl
import stat
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lazy_memory.adapters.address import Address
from lazy_memory.adapters.tokens import TokenInfo, TokenRole, TokenStore
from lazy_memory.engine.errors import InvalidConfig, LazyMemoryError, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.wording import counted
from lazy_memory.rpc.connection_limits import (
    ConnectionLimits,
    GuardedReader,
    at_the_cap,
    first_line,
    handshake_timed_out,
    outstayed,
    release_memory,
    see_out,
)
from lazy_memory.rpc.server import (
    Authenticator,
    EngineServer,
    Grant,
    Session,
    build_server,
    serve_connection,
)

READY_PREFIX = "lazy-memory daemon listening on "
"""The one line the daemon prints to stderr once it listens, followed by its real address."""

TOKEN_REQUIRED = "a valid token is required: pass initializationOptions.token"
CLOSE_TIMEOUT_SECONDS = 5.0
MAX_UNREAD_BYTES = 32 * 1024 * 1024
"""Responses a client may leave unread before its connection is dropped."""
COLLECT_AFTER_CLOSE_SECONDS = 1.0
"""How soon after connections close the memory they held in reference cycles is freed."""

SessionFactory = Callable[[Authenticator], Session]
"""Builds a connection's Session around its authenticator; every one shares one storage."""

_ACTOR_KINDS = {
    TokenRole.HUMAN: ActorKind.HUMAN,
    TokenRole.BUILDER: ActorKind.BUILDER,
    TokenRole.AGENT: ActorKind.BUILDER,
    TokenRole.ENGINE: ActorKind.SYSTEM,
}

logger = logging.getLogger(__name__)


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server-side TLS context from a PEM certificate chain and key, else InvalidConfig."""
    for what, path in (("certificate", cert), ("key", key)):
        try:
            path.read_bytes()
        except OSError as error:
            raise InvalidConfig(f"cannot read the TLS {what} {path}: {error.strerror}") from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        # A password of "" instead of none: OpenSSL would prompt on the terminal for an
        # encrypted key, and a daemon must fail, not wait for someone to type.
        context.load_cert_chain(cert, key, password="")
    except ssl.SSLError as error:
        raise InvalidConfig(
            f"cannot use the TLS certificate {cert} with the key {key}: they must be a PEM "
            f"certificate chain and its unencrypted private key ({error.reason or error})"
        ) from None
    return context


def grant_for(token: TokenInfo) -> Grant:
    """What a token's connections may do: write as its role and name (an agent never)."""
    actor = Actor(kind=_ACTOR_KINDS[token.role], detail=token.name)
    # Fail closed: an agent token without a task (a hand-edited file) is an agent all the same.
    task_id = "" if token.role is TokenRole.AGENT and token.task is None else token.task
    return Grant(
        Identity(actor=actor, task_id=task_id),
        storage_access=token.role is TokenRole.ENGINE,
        storage_reads=token.role is TokenRole.AGENT,
    )


def token_authenticator(tokens: TokenStore, connection: str) -> Authenticator:
    """Grant a connection by `initializationOptions.token`, read from the file right now."""

    def authenticate(options: Any) -> Grant:
        secret = options.get("token") if isinstance(options, dict) else None
        try:
            token = tokens.verify(secret) if isinstance(secret, str) else None
        except LazyMemoryError as error:
            logger.error("%s refused: %s", connection, error)
            raise
        if token is None:
            reason = "no token" if secret is None else "an unknown or revoked token"
            logger.warning("%s refused: %s", connection, reason)
            raise PermissionDenied(TOKEN_REQUIRED)
        logger.info("%s initialized with token %s (%s)", connection, token.id, token.role)
        return grant_for(token)

    return authenticate


async def serve_daemon(
    address: Address,
    new_session: SessionFactory,
    tokens: TokenStore,
    ssl_context: ssl.SSLContext | None = None,
    limits: ConnectionLimits | None = None,
) -> None:
    """Serve every client that connects to address until SIGTERM or SIGINT, then stop cleanly.

    Stopping closes the listener and every connection, cancels the requests still running
    and removes the unix socket; the caller owns the storage and closes it afterwards.
    """
    if ssl_context is not None and address.path is not None:
        raise InvalidConfig("TLS is for tcp: addresses; a unix socket is private by its mode")
    if address.tls and ssl_context is None:
        raise InvalidConfig(f"{address} needs --tls-cert and --tls-key")
    # Read now, a corrupt token file fails the start instead of every connection.
    if not tokens.list():
        logger.warning(
            "no tokens in %s yet: every client will be refused until you run "
            "`lazy engine token add`",
            tokens.path,
        )
    limits = limits or ConnectionLimits()
    daemon = _Daemon(new_session, tokens, limits)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        listener, listening = await _listen(address, daemon.accept, ssl_context, limits)
        try:
            print(f"{READY_PREFIX}{listening}", file=sys.stderr, flush=True)
            await stop.wait()
            logger.info("stopping: closing %s", counted(len(daemon.connections), "connection"))
        finally:
            listener.close()
            await daemon.close_all()
            await listener.wait_closed()
            if address.path is not None:
                address.path.unlink(missing_ok=True)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


class _Daemon:
    """The live connections, each served in a task of its own."""

    def __init__(
        self, new_session: SessionFactory, tokens: TokenStore, limits: ConnectionLimits
    ) -> None:
        self.new_session = new_session
        self.tokens = tokens
        self.limits = limits
        self.connections: set[asyncio.Task[None]] = set()
        self.refused: set[asyncio.BaseTransport] = set()
        self.servers: set[EngineServer] = set()
        self.accepted = 0
        self.stopping = False
        self.collecting: asyncio.TimerHandle | None = None

    def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Start serving a new connection; its task is tracked so a stop can close it."""
        if self.stopping:
            writer.transport.abort()
            return
        if len(self.connections) >= self.limits.max_connections:
            self._refuse(writer)
            return
        self.accepted += 1
        task = asyncio.ensure_future(self._serve(f"connection {self.accepted}", reader, writer))
        self.connections.add(task)
        task.add_done_callback(self.connections.discard)

    def _refuse(self, writer: asyncio.StreamWriter) -> None:
        """Tell a connection over the cap why, and end it: it never gets a server."""
        full = at_the_cap(self.limits)
        logger.warning("refused a connection from %s: %s", _peer(writer), full)
        self.refused.add(writer.transport)
        see_out(writer, f"the daemon has {full}: try later", self._refusal_ended)

    def _refusal_ended(self, transport: asyncio.BaseTransport) -> None:
        self.refused.discard(transport)
        self._collect_soon()  # a crowd refused leaves its buffers behind, as one served does

    async def close_all(self) -> None:
        """Answer the requests running, close every connection (flushing what was written
        to it), then end the requests still running.

        Each connection first refuses new requests and gets up to DRAIN_SECONDS for those it
        is running: answered, none is a write its client never hears of. One that outlasts
        that has nobody left to answer, and the store closes once the daemon returns:
        cancelled now, a write rolls back instead of failing half-way.
        """
        self.stopping = True
        if self.collecting is not None:
            self.collecting.cancel()
        servers = list(self.servers)
        await asyncio.gather(*(server.stop() for server in servers))
        for transport in list(self.refused):
            transport.close()
        await _cancel(list(self.connections))
        # Only now: a connection reads what is already buffered before its cancel lands,
        # and pygls keeps each request's task here until it is answered (annotated as a
        # concurrent.futures.Future, it holds asyncio tasks for async handlers).
        running: list[Any] = [
            request for server in servers for request in server.protocol._request_futures.values()
        ]
        await _cancel([request for request in running if isinstance(request, asyncio.Future)])

    async def _serve(
        self, connection: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        logger.info("%s accepted from %s", connection, _peer(writer))
        accepted = time.monotonic()
        try:
            first = await first_line(reader, self.limits)
            if first is None:
                logger.info("%s timed out: %s", connection, handshake_timed_out(self.limits))
                return
            if first == b"":
                return  # it left without a word
            server = build_server(self.new_session(token_authenticator(self.tokens, connection)))

            def write(data: bytes) -> None:
                if writer.transport.is_closing():
                    return  # answers to requests that outlived their connection: nobody reads
                if writer.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
                    # A client that asks without reading the answers would grow this
                    # process, which every other client shares, without bound.
                    logger.warning("%s dropped: it does not read its responses", connection)
                    writer.transport.abort()
                    server.closed.set()
                    return
                writer.write(data)

            self.servers.add(server)
            watching = asyncio.ensure_future(
                self._close_when_outstayed(connection, server, accepted)
            )
            try:
                await serve_connection(server, GuardedReader(reader, server, first), write)
            finally:
                await _cancel([watching])
                self.servers.discard(server)
        except (ConnectionError, ssl.SSLError) as error:
            logger.info("%s lost: %s", connection, error)
        except Exception:
            logger.exception("%s failed; closing it", connection)
        finally:
            await _close(writer)
            logger.info("%s closed", connection)
            self._collect_soon()

    def _collect_soon(self) -> None:
        """Free closed connections' memory within a second, once however many close."""
        # Not while stopping: the process is about to give all of it back, and sooner.
        if self.collecting is None and not self.stopping:
            loop = asyncio.get_running_loop()
            self.collecting = loop.call_later(COLLECT_AFTER_CLOSE_SECONDS, self._collect)

    def _collect(self) -> None:
        self.collecting = None
        release_memory()

    async def _close_when_outstayed(
        self, connection: str, server: EngineServer, accepted: float
    ) -> None:
        reason = await outstayed(server, self.limits, accepted)
        logger.info("%s timed out: %s", connection, reason)
        server.closed.set()


async def _cancel(tasks: list[asyncio.Future[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close after flushing what is buffered, within a time limit."""
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), CLOSE_TIMEOUT_SECONDS)
    except Exception:  # a peer gone or stuck in the TLS goodbye: nothing is left to flush
        writer.transport.abort()


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
        probe.settimeout(CLOSE_TIMEOUT_SECONDS)
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)
            logger.info("removed the stale socket %s", path)
            return
        except OSError as error:
            raise InvalidConfig(f"cannot listen on unix:{path}: {error}") from None
    raise InvalidConfig(f"cannot listen on unix:{path}: another daemon is listening there")


async def _listen(
    address: Address,
    accept: Callable[[asyncio.StreamReader, asyncio.StreamWriter], None],
    ssl_context: ssl.SSLContext | None,
    limits: ConnectionLimits,
) -> tuple[asyncio.Server, Address]:
    """The listening server and the address it really listens on (port 0 made real)."""
    if address.path is not None:
        return await asyncio.start_unix_server(accept, sock=_bind_unix(address.path)), address
    if ssl_context is None and not _is_loopback(address.host):
        logger.warning(
            "listening on %s without TLS: tokens and records cross the network in clear text "
            "(use --tls-cert and --tls-key)",
            address,
        )
    try:
        # A TLS handshake comes before accept, so before the handshake timeout starts: it
        # gets the same time of its own (asyncio's default is a minute).
        handshake = None if ssl_context is None else limits.handshake_seconds
        listener = await asyncio.start_server(
            accept, address.host, address.port, ssl=ssl_context, ssl_handshake_timeout=handshake
        )
    except OSError as error:
        raise InvalidConfig(f"cannot listen on {address}: {error.strerror or error}") from None
    # Clients name a TLS daemon tls:HOST:PORT, whichever form it was started with.
    scheme = "tcp" if ssl_context is None else "tls"
    return listener, Address(scheme, host=address.host, port=listener.sockets[0].getsockname()[1])


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _peer(writer: asyncio.StreamWriter) -> str:
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
