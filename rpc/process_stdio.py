"""The process's own standard input and output, claimed for a protocol (`lazy engine`, `lazy mcp`).

A stray print, a library writing to stdout or a child process would corrupt the framing and
make every later request time out: so the protocol keeps the real stdout descriptor, and fd 1
and `sys.stdout` point at stderr (the client's log) from then on. Likewise only the protocol
reads the client's bytes: fd 0 reads /dev/null once stdin is claimed. Cheap to import: it is
on `lazy mcp`'s start path, which must answer within tens of milliseconds.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

CHUNK = 64 * 1024
"""Bytes read from stdin at a time."""


def claim_stdout() -> int:
    """Keep the real stdout for the protocol (returned) and point fd 1 and sys.stdout at stderr."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def claim_stdin() -> int:
    """Keep the real stdin for the protocol (returned) and point fd 0 at /dev/null."""
    protocol = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return protocol


def write_all(fd: int, data: bytes) -> None:
    """Write data whole to fd (blocking: one message is never interleaved with another)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def stdin_reader(fd: int = 0) -> asyncio.StreamReader:
    """A stream over fd (stdin) fed by a daemon thread (works for pipes, files and terminals).

    A daemon thread, unlike an executor's, never keeps the process alive once it is done:
    after a stop it may still be blocked reading when the process exits.
    """
    import asyncio
    import threading

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK)

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, CHUNK)
            except OSError:
                chunk = b""
            try:
                if not chunk:
                    loop.call_soon_threadsafe(reader.feed_eof)
                    return
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            except RuntimeError:  # the loop is closed: the process is exiting
                return

    threading.Thread(target=pump, name="lazy-stdin", daemon=True).start()
    return reader
