"""`lazy web`: the parser of the read-only web view; the view itself is rpc/web/.

Building this parser imports nothing beyond argparse: Starlette and uvicorn (the `web` extra)
are imported only when `lazy web` runs, and their absence is one line saying how to install
them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DEFAULT_LISTEN = "127.0.0.1:7412"
"""Where `lazy web` listens unless --listen says otherwise: loopback only."""
INSTALL_HINT = "pip install 'lazy-memory[web]'"
EXIT_MISSING_EXTRA = 1


def add_commands(commands: Any) -> None:
    """Add `lazy web` to the top-level command parser."""
    web = commands.add_parser(
        "web",
        help="serve a read-only web view of the store (the web extra)",
        description="Serve a read-only web view of the configured store: the index as builders "
        "and agents get it, each record with its revisions and their diffs, search, the compact "
        "and doctor, updated live when a record changes. On a loopback address (the default) "
        "anyone on this machine can open it; on any other it needs a human or builder token "
        "(`lazy engine token add`) and TLS, unless --insecure-http. Needs "
        f"{INSTALL_HINT}.",
    )
    web.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"the address to serve on (default {DEFAULT_LISTEN}; port 0 picks a free one)",
    )
    web.add_argument("--tls-cert", metavar="FILE", type=Path, help="TLS certificate (PEM)")
    web.add_argument("--tls-key", metavar="FILE", type=Path, help="TLS private key (PEM)")
    web.add_argument(
        "--insecure-http",
        action="store_true",
        help="serve a non-loopback address without TLS: tokens and records cross the network "
        "in clear text",
    )
    web.add_argument("--debug", action="store_true", default=argparse.SUPPRESS)
    web.set_defaults(run=run_web)


async def run_web(arguments: argparse.Namespace) -> int:
    """Serve the web view, or say in one line how to install what it needs."""
    import importlib.util

    missing = [name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"lazy: error: `lazy web` needs {' and '.join(missing)}: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return EXIT_MISSING_EXTRA
    from lazy_memory.rpc.web.serve import serve_web

    return await serve_web(arguments)
