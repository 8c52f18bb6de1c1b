"""Serving the engine on the process's own standard input and output."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from lazy_memory.rpc.jsonrpc.server import EngineServer, serve_connection
from lazy_memory.rpc.process_stdio import claim_stdout, stdin_reader, write_all


async def serve_stdio(server: EngineServer) -> int:
    """Serve one client over stdio until exit, end of input or SIGTERM; the exit status.

    LSP's: 1 for an exit without shutdown, else 0. SIGTERM (what a container runtime, an
    editor or systemd sends to stop the engine) answers the requests already running,
    refuses the rest, and ends with 0.
    """
    protocol_fd = claim_stdout()

    def write(data: bytes) -> None:
        write_all(protocol_fd, data)

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
