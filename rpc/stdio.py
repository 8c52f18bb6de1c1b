"""Serving the engine on the process's own standard input and output."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from lazy_memory.rpc.server import EngineServer, serve_connection

_CHUNK = 64 * 1024


def take_stdout() -> int:
    """Keep the real stdout for protocol messages and point fd 1 at stderr.

    A stray print, or a library writing to stdout, would corrupt the framing and make
    every later request time out; this way it lands in the log instead.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    return protocol_fd


def stdin_reader() -> asyncio.StreamReader:
    """A stream over fd 0 fed by a daemon thread (works for pipes, files and terminals).

    A daemon thread, unlike an executor's, never keeps the process alive once it is done.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024)

    def pump() -> None:
        while True:
            try:
                chunk = os.read(0, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, chunk)

    threading.Thread(target=pump, name="lazy-engine-stdin", daemon=True).start()
    return reader


async def serve_stdio(server: EngineServer) -> int:
    """Serve one client over stdio until exit or end of input; the LSP exit status."""
    protocol_fd = take_stdout()

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(protocol_fd, view) :]

    await serve_connection(server, stdin_reader(), write)
    return 1 if server.closed.is_set() and not server.shut_down else 0
