"""Serving the engine on the process's own standard input and output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
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


def stdin_reader(fd: int = 0) -> asyncio.StreamReader:
    """A stream over fd (stdin) fed by a daemon thread (works for pipes, files and terminals).

    A daemon thread, unlike an executor's, never keeps the process alive once it is done:
    after a stop it may still be blocked reading when the process exits.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024)

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError:
                chunk = b""
            try:
                if not chunk:
                    loop.call_soon_threadsafe(reader.feed_eof)
                    return
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            except RuntimeError:  # the loop is closed: the process is exiting
                return

    threading.Thread(target=pump, name="lazy-engine-stdin", daemon=True).start()
    return reader


async def serve_stdio(server: EngineServer) -> int:
    """Serve one client over stdio until exit, end of input or SIGTERM; the exit status.

    LSP's: 1 for an exit without shutdown, else 0. SIGTERM (what a container runtime, an
    editor or systemd sends to stop the engine) answers the requests already running,
    refuses the rest, and ends with 0.
    """
    protocol_fd = take_stdout()

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(protocol_fd, view) :]

    loop = asyncio.get_running_loop()
    terminated = asyncio.Event()
    # As a container's main process (PID 1) the engine would otherwise ignore SIGTERM.
    loop.add_signal_handler(signal.SIGTERM, terminated.set)
    serving = asyncio.ensure_future(serve_connection(server, stdin_reader(), write))
    stopping = asyncio.ensure_future(terminated.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not serving.done():
            await server.stop()
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            return 0
        serving.result()  # its error, if it failed
    finally:
        stopping.cancel()
        loop.remove_signal_handler(signal.SIGTERM)
    return 1 if server.closed.is_set() and not server.shut_down else 0
