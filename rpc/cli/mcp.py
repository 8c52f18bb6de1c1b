"""`lazy mcp`: serve the memory tools to an agent over MCP on standard input and output."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from lazy_memory.adapters.config import settings_or_defaults


def add_commands(commands: Any) -> None:
    """Add `lazy mcp` to the top-level command parser."""
    server = commands.add_parser(
        "mcp",
        help="serve the memory tools to an agent over MCP (stdio)",
        description="Serve lazy_memory_recall, lazy_memory_save and lazy_search over MCP on "
        "standard input and output until the client disconnects. Writes are attributed to the "
        "builder named by LAZY_ACTOR; with LAZY_TASK_ID set the session is a read-only agent.",
    )
    server.set_defaults(run=serve)


async def serve(arguments: argparse.Namespace) -> int:
    """Serve the MCP tools over stdio as the session the environment names, then close."""
    # First thing, before any import that might print or log: stdout is the protocol's
    # alone, and the log is stderr. The SDK logs a line per request at INFO: the client's
    # log wants only what matters.
    protocol = claim_stdout()
    from lazy_memory.rpc.logs import configure_logging

    configure_logging(logging.WARNING)
    from lazy_memory.rpc.lifecycle import exit_on_sigterm_until_serving, freeze_heap_for_exit

    exit_on_sigterm_until_serving()
    # Here, not at the top: building the parser (every command does) must not import them.
    import asyncio
    import signal

    # The MCP SDK takes about a second to import: only this command may pay for it.
    from lazy_memory.adapters import open_storage_anyway, service_factory
    from lazy_memory.rpc.identity import builder_identity
    from lazy_memory.rpc.mcp_stdio import Stdio, serve_stdio
    from lazy_memory.rpc.mcp_tools import build_mcp_server
    from lazy_memory.rpc.version import package_version

    settings, config_error = settings_or_defaults()
    for warning in settings.warnings:
        print(f"lazy: warning: {warning}", file=sys.stderr)
    # Tools must be served whatever state the store is in: see adapters/reopening.py.
    storage = await open_storage_anyway(settings, config_error)
    service = service_factory(settings, storage)(builder_identity(settings))
    stdio = Stdio(protocol)
    loop = asyncio.get_running_loop()
    # SIGTERM (a harness or container stopping the server) answers the requests already
    # read, then ends the input: the server closes as if the client had, and exits 0.
    loop.add_signal_handler(signal.SIGTERM, stdio.stop)
    try:
        server = build_mcp_server(service, settings.tool_result_limit_chars, package_version())
        await serve_stdio(server, stdio)
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        await service.aclose()
        freeze_heap_for_exit()  # a stop on SIGTERM must be over within about a second
    return 0


def claim_stdout() -> int:
    """Keep the real stdout for the protocol (returned) and point fd 1 and sys.stdout at stderr.

    A stray print, a library or a child process writing to stdout would corrupt the framing
    and make every later request time out; this way it lands in the client's log instead.
    """
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol
