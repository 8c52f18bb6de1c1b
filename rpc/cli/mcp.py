"""`lazy mcp`: serve the memory tools to an agent over MCP on standard input and output.

Its start is a product feature: Claude Code in `-p` mode sends the first model request without
waiting for MCP servers (and with `alwaysLoad` waits a few seconds at most), so `lazy mcp`
answers `initialize` and `tools/list` before it imports anything heavy or opens the store
(rpc/mcp/stdio.py). `lazy mcp` as the whole command line takes the shortest path, without the
command parser (rpc/cli/__init__.py); any other spelling comes here through the parser.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from lazy_memory.adapters.config import Settings
    from lazy_memory.engine.errors import LazyMemoryError
    from lazy_memory.rpc.mcp.stdio import McpStdio, Started
    from lazy_memory.rpc.mcp.tools import McpTools

_TOOL_MODULES = ("lazy_memory.adapters", "lazy_memory.rpc.identity", "lazy_memory.rpc.mcp.tools")
"""What the tools need (pydantic, the engine, the composition root): imported once they are
listed, off the event loop."""


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


def serve_now() -> int:
    """`lazy mcp`, started from nothing: no parser, no asyncio until the tools are listed."""
    stdio, started, settings, config_error = _start()
    if started.ended:
        return 0
    import asyncio

    return asyncio.run(_serve_tools(stdio, started, settings, config_error))


async def serve(arguments: argparse.Namespace) -> int:
    """`lazy mcp` through the parser (`lazy --debug mcp`): the same server in the running loop.

    Its start reads stdin blocking, which holds up nothing: nothing else runs in this loop yet.
    """
    stdio, started, settings, config_error = _start()
    if started.ended:
        return 0
    return await _serve_tools(stdio, started, settings, config_error)


def _start() -> tuple[McpStdio, Started, Settings, LazyMemoryError | None]:
    """Claim stdio, then answer the session's start (rpc/mcp/stdio.py serve_start)."""
    # First thing, before any import that might print: stdout is the protocol's alone.
    from lazy_memory.rpc.process_stdio import claim_stdin, claim_stdout

    protocol = claim_stdout()
    from lazy_memory.rpc.lifecycle import exit_on_sigterm_until_serving

    exit_on_sigterm_until_serving()
    from lazy_memory.adapters.config import settings_or_defaults
    from lazy_memory.rpc.mcp.protocol import McpSession
    from lazy_memory.rpc.mcp.stdio import McpStdio, serve_start
    from lazy_memory.rpc.version import VERSION

    settings, config_error = settings_or_defaults()
    for warning in settings.warnings:
        print(f"lazy: warning: {warning}", file=sys.stderr)
    stdio = McpStdio(claim_stdin(), protocol)
    session = McpSession(VERSION, settings.tool_result_limit_chars)
    return stdio, serve_start(session, stdio), settings, config_error


async def _serve_tools(
    stdio: McpStdio, started: Started, settings: Settings, config_error: LazyMemoryError | None
) -> int:
    """Serve the rest of the session with the tools, opened now (rpc/mcp/stdio.py)."""
    import logging

    from lazy_memory.rpc.lifecycle import freeze_heap_for_exit
    from lazy_memory.rpc.logs import configure_logging
    from lazy_memory.rpc.mcp.stdio import serve_tools

    configure_logging(logging.WARNING)

    async def open_tools() -> McpTools:
        import asyncio
        import importlib

        for module in _TOOL_MODULES:
            await asyncio.to_thread(importlib.import_module, module)
        from lazy_memory.adapters import open_storage_anyway, service_factory
        from lazy_memory.rpc.identity import builder_identity
        from lazy_memory.rpc.mcp.tools import McpTools

        # Tools are served whatever state the store is in: see adapters/reopening.py.
        storage = await open_storage_anyway(settings, config_error)
        service = service_factory(settings, storage)(builder_identity(settings))
        return McpTools(service, settings.tool_result_limit_chars)

    try:
        await serve_tools(stdio, open_tools, started)
    finally:
        freeze_heap_for_exit()  # a stop on SIGTERM must be over within about a second
    return 0
