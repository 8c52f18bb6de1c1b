"""The engine daemon: one process serving many clients on a unix socket or TCP, with tokens.

The daemon accepts connections itself (rpc/jsonrpc/listener.py); each waits at the front door
(rpc/jsonrpc/front_door.py) until it presents a valid token, apart from those that have, and is
served once it has sent its first message whole. Every served connection gets its own
server (`build_server`) over the one shared storage. Its
identity comes from the token it presents in `initialize` (`initializationOptions.token`),
checked against the token file at that moment, so a revoked token is refused from the next
connection on without a restart. A client that sends garbage, disconnects or crashes its
handler closes only its own connection.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lazy_memory.adapters.address import Address
from lazy_memory.adapters.tokens import TokenInfo, TokenRole, TokenStore
from lazy_memory.engine.errors import InvalidConfig, LazyMemoryError, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.wording import counted
from lazy_memory.rpc.jsonrpc.connection_limits import (
    ConnectionLimits,
    GuardedReader,
    first_message,
    freeze_what_lasts,
    idled_out,
    release_memory,
    seen_out,
)
from lazy_memory.rpc.jsonrpc.front_door import Arrival, FrontDoor, raise_file_limit
from lazy_memory.rpc.jsonrpc.listener import listen
from lazy_memory.rpc.jsonrpc.pygls_private import in_flight
from lazy_memory.rpc.jsonrpc.quiet_log import QuietLog
from lazy_memory.rpc.jsonrpc.server import (
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
"""How long after the last connection closed the memory they held in cycles is freed."""

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
    raise_file_limit(limits)
    freeze_what_lasts(lambda: build_server(new_session(token_authenticator(tokens, "warm-up"))))
    daemon = _Daemon(new_session, tokens, limits)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        listener, listening = await listen(
            address, daemon.arrival, ssl_context, limits, daemon.door.accepts_now
        )
        try:
            print(f"{READY_PREFIX}{listening}", file=sys.stderr, flush=True)
            await stop.wait()
            logger.info("stopping: closing %s", counted(len(daemon.connections), "connection"))
        finally:
            listener.close()
            await daemon.close_all()
            if address.path is not None:
                address.path.unlink(missing_ok=True)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


class _Daemon:
    """The live connections, each served in a task of its own, and who holds a place
    (rpc/jsonrpc/front_door.py)."""

    def __init__(
        self, new_session: SessionFactory, tokens: TokenStore, limits: ConnectionLimits
    ) -> None:
        self.new_session = new_session
        self.tokens = tokens
        self.limits = limits
        self.connections: set[asyncio.Task[None]] = set()
        self.quiet = QuietLog(logger)
        self.door = FrontDoor(limits, self.quiet, self._start, self._collect_soon)
        self.servers: set[EngineServer] = set()
        self.stopping = False
        self.collecting: asyncio.TimerHandle | None = None
        self.last_closed = 0.0

    def arrival(self) -> Arrival:
        """The protocol of a connection just accepted: it waits at the door for its token."""
        return Arrival(self.door)

    def _start(self, arrival: Arrival, connection: str) -> asyncio.Task[None]:
        """Serve a connection that has spoken; its task is tracked so a stop can close it."""
        task = asyncio.ensure_future(self._serve(connection, arrival))
        self.connections.add(task)
        task.add_done_callback(self.connections.discard)
        return task

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
        self.quiet.sum_up()
        servers = list(self.servers)
        await asyncio.gather(*(server.stop() for server in servers))
        self.door.close()
        await _cancel(list(self.connections))
        # Only now: a connection reads what is already buffered before its cancel lands,
        # and pygls holds each request's task in flight until it is answered.
        running: list[Any] = [
            request for server in servers for request in in_flight(server.protocol)
        ]
        await _cancel([request for request in running if isinstance(request, asyncio.Future)])

    async def _serve(self, connection: str, arrival: Arrival) -> None:
        reader, writer = arrival.reader, arrival.writer
        assert writer is not None
        try:
            first = await first_message(reader)
            if not first.data and first.error is None:
                return  # it left without a word
            authenticate = token_authenticator(self.tokens, connection)
            watching: list[asyncio.Future[Any]] = []

            def admit(options: Any) -> Grant:
                grant = authenticate(options)
                try:
                    self.door.admit(arrival)
                except LazyMemoryError as full:
                    logger.warning("%s refused: %s", connection, full)
                    raise
                # Idle from now on; until now, its time was the door's.
                watching.append(asyncio.ensure_future(self._close_when_idle(connection, server)))
                return grant

            server = build_server(self.new_session(admit))

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
            try:
                await serve_connection(server, GuardedReader(reader, server, first), write)
            finally:
                await _cancel(watching)
                self.servers.discard(server)
        except (ConnectionError, ssl.SSLError) as error:
            logger.info("%s lost: %s", connection, error)
        except Exception:
            logger.exception("%s failed; closing it", connection)
        finally:
            member = self.door.leave(arrival)
            # One the door turned away is the door's to close, once it is told why.
            if not seen_out(writer):
                await _close(writer)
            if member or self.quiet.allows("closed"):
                logger.info("%s closed", connection)
            self._collect_soon()

    def _collect_soon(self) -> None:
        """Free closed connections' memory once none has closed for a second.

        Not before: a full collection takes tens of milliseconds, which every client would
        wait through, once a second, while a crowd comes and goes; meanwhile the allocations
        it makes run the collector anyway.
        """
        # Not while stopping: the process is about to give all of it back, and sooner.
        if self.stopping:
            return
        loop = asyncio.get_running_loop()
        self.last_closed = loop.time()
        if self.collecting is None:
            self.collecting = loop.call_later(COLLECT_AFTER_CLOSE_SECONDS, self._collect)

    def _collect(self) -> None:
        loop = asyncio.get_running_loop()
        quiet_for = loop.time() - self.last_closed
        if quiet_for < COLLECT_AFTER_CLOSE_SECONDS:
            remaining = COLLECT_AFTER_CLOSE_SECONDS - quiet_for
            self.collecting = loop.call_later(remaining, self._collect)
            return
        self.collecting = None
        release_memory()

    async def _close_when_idle(self, connection: str, server: EngineServer) -> None:
        reason = await idled_out(server, self.limits)
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
