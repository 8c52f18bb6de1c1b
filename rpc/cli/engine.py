"""`lazy engine`: the JSON-RPC engine on stdio or as a daemon, and the daemon's tokens."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazy_memory.adapters.config import Settings, load_settings
from lazy_memory.rpc.cli.common import common_flags, print_json, refuse_agent
from lazy_memory.rpc.cli.parsing import add_command_group
from lazy_memory.rpc.cli.table import output_width, render
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from lazy_memory.adapters.tokens import TokenStore
    from lazy_memory.rpc.jsonrpc.daemon import SessionFactory

    Serve = Callable[[SessionFactory], Awaitable[int]]


# Spelled out so that building the parser imports no asyncio (adapters.address does);
# tests/unit/test_cli_output.py holds the help to every form in adapters.address.FORMS.
LISTEN_FORMS = (
    "unix:PATH (a socket only this user can open), tcp:HOST:PORT (plain TCP: keep it on a "
    "trusted network), or tls:HOST:PORT (TCP with TLS, with --tls-cert and --tls-key; clients "
    "trust the certificate through [remote] ca_file or LAZY_TLS_CA); port 0 picks a free port"
)
"""The daemon's listen addresses, as `lazy engine --help` explains them."""


def add_commands(commands: Any) -> None:
    """Add `lazy engine` and its `token` subcommands to the top-level command parser."""
    engine = commands.add_parser(
        "engine",
        help="serve the memory store over JSON-RPC (stdio, or a daemon with --listen)",
        description="Serve the memory store over JSON-RPC with LSP framing. Without --listen, "
        "one client on stdin/stdout whose identity comes from LAZY_ACTOR and LAZY_TASK_ID "
        "(with a task id it is an agent and every write is refused). With --listen, a daemon "
        f"serving many clients at once, each identified by the token it presents: {LISTEN_FORMS}.",
    )
    engine.add_argument(
        "--listen",
        metavar="ADDRESS",
        help="serve many clients on unix:PATH, tcp:HOST:PORT or tls:HOST:PORT until SIGTERM "
        "or SIGINT",
    )
    engine.add_argument(
        "--tls-cert", metavar="FILE", type=Path, help="TLS certificate (PEM), for tls:HOST:PORT"
    )
    engine.add_argument(
        "--tls-key", metavar="FILE", type=Path, help="TLS private key (PEM), for tls:HOST:PORT"
    )
    engine.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    engine.set_defaults(run=run_engine)

    subcommands = engine.add_subparsers(title="commands", metavar="COMMAND", required=False)
    token = subcommands.add_parser(
        "token",
        help="create, list and revoke the daemon's tokens",
        description="Create, list and revoke the tokens a daemon (lazy engine --listen) "
        "identifies its clients by.",
    )
    tokens = add_command_group(token)
    parent = common_flags()

    add = tokens.add_parser(
        "add",
        parents=[parent],
        help="create a token and print its secret, once",
        description="Create a token. human and builder tokens write as their name; an agent "
        "token (which needs --task) is read-only; an engine token is a trusted lazy process "
        "using the daemon as its storage.",
    )
    # The store checks the role: importing it here would slow every `lazy` command down.
    add.add_argument("--role", required=True, help="human, builder, agent or engine")
    add.add_argument("--name", help="who writes with it, as history shows (default: its id)")
    add.add_argument("--task", metavar="ID", help="the agent's task id (agent tokens only)")
    add.set_defaults(run=add_token)

    listing = tokens.add_parser("list", parents=[parent], help="every token, without secrets")
    listing.set_defaults(run=list_tokens)

    revoke = tokens.add_parser("revoke", parents=[parent], help="refuse a token from now on")
    revoke.add_argument("id")
    revoke.set_defaults(run=revoke_token)


async def run_engine(arguments: argparse.Namespace) -> int:
    """Serve one client on stdio, or many with --listen; pygls is imported only on this path."""
    from lazy_memory.rpc.lifecycle import exit_on_sigterm_until_serving, freeze_heap_for_exit

    exit_on_sigterm_until_serving()  # importing and opening the store take a second or two
    from lazy_memory.adapters import open_storage_anyway, service_factory
    from lazy_memory.adapters.config import settings_or_defaults
    from lazy_memory.adapters.polling import PollingFeed
    from lazy_memory.engine.ports import ChangeFeed
    from lazy_memory.rpc.jsonrpc.server import Session
    from lazy_memory.rpc.logs import configure_logging
    from lazy_memory.rpc.version import VERSION

    configure_logging()
    settings, config_error = settings_or_defaults()
    # Everything checkable is checked before the store is opened (or created).
    serve = _daemon(arguments, settings) if arguments.listen else _stdio(arguments, settings)
    # A store that cannot be opened must not keep the engine from answering `initialize`:
    # it serves the error (the marker, for context) and tries the store again on each use.
    storage = await open_storage_anyway(settings, config_error)
    new_service = service_factory(settings, storage)
    feed = (
        storage if isinstance(storage, ChangeFeed) else PollingFeed(storage, settings.poll_seconds)
    )
    try:
        return await serve(
            lambda authenticate: Session(storage, new_service, authenticate, VERSION, feed)
        )
    finally:
        await storage.aclose()
        freeze_heap_for_exit()  # a stop on SIGTERM must be over within about a second


def _stdio(arguments: argparse.Namespace, settings: Settings) -> Serve:
    from lazy_memory.rpc.identity import builder_identity
    from lazy_memory.rpc.jsonrpc.server import Grant, build_server
    from lazy_memory.rpc.jsonrpc.stdio import serve_stdio

    if arguments.tls_cert or arguments.tls_key:
        raise UsageError("--tls-cert and --tls-key are for the daemon: add --listen tcp:HOST:PORT")
    grant = Grant(builder_identity(settings))

    async def serve(new_session: SessionFactory) -> int:
        return await serve_stdio(build_server(new_session(lambda _options: grant)))

    return serve


def _daemon(arguments: argparse.Namespace, settings: Settings) -> Serve:
    from lazy_memory.adapters.address import parse_address
    from lazy_memory.rpc.jsonrpc.connection_limits import ConnectionLimits
    from lazy_memory.rpc.jsonrpc.daemon import serve_daemon, server_tls_context

    # A daemon writes for whoever holds a token: no agent serves the store, nor creates it.
    refuse_agent("engine --listen")
    address = parse_address(arguments.listen)
    if (arguments.tls_cert is None) != (arguments.tls_key is None):
        raise UsageError("TLS needs both --tls-cert and --tls-key")
    tls = (
        None
        if arguments.tls_cert is None
        else server_tls_context(arguments.tls_cert, arguments.tls_key)
    )
    tokens = _token_store(settings)
    # Tokens guard nothing if someone else can write them or the store: refuse before listening.
    tokens.require_private()

    async def serve(new_session: SessionFactory) -> int:
        limits = ConnectionLimits.from_settings(settings)
        await serve_daemon(address, new_session, tokens, tls, limits)
        return 0

    return serve


async def add_token(arguments: argparse.Namespace) -> int:
    """Create a token and print its secret: the only time anyone sees it."""
    # An agent that could mint a token could write as a builder through the daemon.
    refuse_agent("engine token add")
    token, secret = _token_store().add(arguments.role, arguments.name, arguments.task)
    if arguments.json:
        print_json(
            {
                **token.model_dump(mode="json", include={"id", "role", "name", "task"}),
                "secret": secret,
            }
        )
    else:
        task = f", task {token.task}" if token.task else ""
        print(f"created {token.id} (role {token.role}, name {token.name}{task})")
        print(f"secret: {secret}")
        print(
            "lazy: the secret is shown only now; the token file keeps only its SHA-256 digest",
            file=sys.stderr,
        )
    return 0


async def list_tokens(arguments: argparse.Namespace) -> int:
    """Print every token: id, role, name, task and when it was created; never a secret."""
    tokens = _token_store().list()
    if arguments.json:
        print_json([token.model_dump(mode="json") for token in tokens])
        return 0
    if not tokens:
        print(
            "No tokens yet. Create one with: lazy engine token add --role builder", file=sys.stderr
        )
        return 0
    rows = [
        [
            token.id,
            token.role.value,
            token.task or "-",
            f"{token.created_at.astimezone(UTC):%Y-%m-%d %H:%M:%S}",
            token.name,
        ]
        for token in tokens
    ]
    header = ["ID", "ROLE", "TASK", "CREATED (UTC)", "NAME"]
    print("\n".join(render(header, rows, output_width(), elidable=[2]).lines))
    return 0


async def revoke_token(arguments: argparse.Namespace) -> int:
    """Delete a token: new connections presenting it are refused, open ones run on."""
    refuse_agent("engine token revoke")
    token = _token_store().revoke(arguments.id)
    if arguments.json:
        print_json(token.model_dump(mode="json"))
    else:
        print(
            f"revoked {token.id} (role {token.role}, name {token.name}); new connections with "
            "it are refused, connections already open keep running until they close"
        )
    return 0


def _token_store(settings: Settings | None = None) -> TokenStore:
    from lazy_memory.adapters.tokens import TokenStore

    return TokenStore.in_data_dir((settings or load_settings()).data_dir)
