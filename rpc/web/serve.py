"""`lazy web`: from the command line to a listening server, and back out on SIGTERM/SIGINT.

Everything checkable is checked before the store is opened (the address and TLS rules, the
token file off the loopback), each refusal one line. The store is opened as the engine opens
it (adapters.open_storage_anyway), so an unreadable store is served as the UNAVAILABLE marker
and picked up once it can be read. The service's identity is a read-only one: the view never
writes, and should a write ever be wired in by mistake the engine's own gate refuses it.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from types import FrameType

import uvicorn
from starlette.middleware import Middleware

from lazy_memory.adapters import open_storage_anyway, service_factory
from lazy_memory.adapters.config import settings_or_defaults
from lazy_memory.adapters.polling import PollingFeed
from lazy_memory.adapters.tokens import TokenStore
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import ChangeFeed
from lazy_memory.rpc.identity import human_identity
from lazy_memory.rpc.web.app import WebView, build_app
from lazy_memory.rpc.web.auth import LoopbackHost, TokenGate, require_login_token
from lazy_memory.rpc.web.listen import Listen, check_listen
from lazy_memory.rpc.web.live import ChangeBroadcast

READ_ONLY_TASK = "lazy-web"
"""The task id of the view's identity: a session with one is read-only (docs/architecture.md,
Identity)."""
SHUTDOWN_SECONDS = 1
"""How long open requests get once a stop is asked for (event streams end at once)."""


def read_only_identity() -> Identity:
    """The person running the view, as a session the write gate refuses every write to."""
    return human_identity(READ_ONLY_TASK)


async def serve_web(arguments: argparse.Namespace) -> int:
    """Serve the configured store's read-only web view until SIGTERM or SIGINT."""
    listen = check_listen(
        arguments.listen, arguments.tls_cert, arguments.tls_key, arguments.insecure_http
    )
    settings, config_error = settings_or_defaults()
    for warning in settings.warnings:
        print(f"lazy: warning: {warning}", file=sys.stderr)
    outer: list[Middleware] = []
    if listen.loopback:
        outer.append(Middleware(LoopbackHost))
    else:
        tokens = TokenStore.in_data_dir(settings.data_dir)
        require_login_token(tokens)
        outer.append(Middleware(TokenGate, tokens=tokens, secure_cookie=listen.tls))
    if listen.tls:
        _check_tls(arguments)
    listener = _bind(listen)
    storage = await open_storage_anyway(settings, config_error)
    feed = (
        storage if isinstance(storage, ChangeFeed) else PollingFeed(storage, settings.poll_seconds)
    )
    broadcast = ChangeBroadcast(feed)
    service = service_factory(settings, storage)(read_only_identity())
    try:
        await broadcast.start()
        app = build_app(WebView(service, broadcast), outer)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=SHUTDOWN_SECONDS,
            ssl_certfile=arguments.tls_cert,
            ssl_keyfile=arguments.tls_key,
        )
        server = _Server(config, broadcast)
        bound = Listen(listen.host, listener.getsockname()[1], listen.tls)
        print(f"lazy web: serving {bound.url} (read-only)", file=sys.stderr, flush=True)
        await server.serve(sockets=[listener])
    finally:
        await broadcast.aclose()
        await service.aclose()
    return 0


def _check_tls(arguments: argparse.Namespace) -> None:
    """Load the certificate and key once now, for a one-line error instead of uvicorn's."""
    from lazy_memory.rpc.jsonrpc.daemon import server_tls_context

    server_tls_context(arguments.tls_cert, arguments.tls_key)


def _bind(listen: Listen) -> socket.socket:
    """The listening socket, bound before the store is opened so a busy port fails first."""
    from lazy_memory.rpc.usage import UsageError

    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    try:
        return socket.create_server((listen.host, listen.port), family=family)
    except OSError as error:
        raise UsageError(
            f"cannot listen on {listen.host}:{listen.port}: {error.strerror or error}"
        ) from None


class _Server(uvicorn.Server):
    """uvicorn's server, ending every event stream as soon as a stop is asked for.

    An event stream never ends by itself, so without this every open page would hold the
    stop for the whole graceful-shutdown timeout.
    """

    def __init__(self, config: uvicorn.Config, broadcast: ChangeBroadcast) -> None:
        super().__init__(config)
        self._broadcast = broadcast
        self._loop = asyncio.get_running_loop()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Stop accepting, end the streams, then let uvicorn finish what is running."""
        # Called from a signal handler: the streams' queues are touched on the loop's turn.
        self._loop.call_soon_threadsafe(self._broadcast.close)
        super().handle_exit(sig, frame)
        # A stop asked for is the normal end, exit status 0 as `lazy engine --listen` has it:
        # uvicorn would otherwise raise the signal again once it has stopped.
        captured = getattr(self, "_captured_signals", None)
        if isinstance(captured, list):
            captured.clear()
