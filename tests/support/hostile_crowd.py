"""A crowd of hostile sockets against a daemon's front door, for tests and the benchmark.

Three kinds, each reconnecting as soon as the daemon drops it, so the crowd never shrinks:

- silent: connects and sends nothing;
- trickling: sends a header a byte at a time (TRICKLE_SECONDS apart), never a whole message;
- reconnecting: connects, hangs up after a moment (up to CHURN_SECONDS), and connects again.

`python -m tests.support.hostile_crowd ADDRESS --silent N --trickling N --reconnecting N
--seconds S` runs one in a process of its own (the benchmark's, so that the crowd has its own
core) and prints its tally as one JSON line on stdout when it stops, after S seconds or at SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import resource
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

TRICKLE_SECONDS = 0.2
CHURN_SECONDS = 1.0
RETRY_SECONDS = 0.05
"""The pause after a connect that failed (refused, reset, out of descriptors)."""
TRICKLE = b"Content-Length: 1000000" + b"\r\nX-Pad: " + b"a" * 10_000
"""What a trickling socket sends, a byte at a time: a header that never ends."""

Opener = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


@dataclass
class Tally:
    """What the crowd did, and what the daemon told it."""

    connects: int = 0
    failed_connects: int = 0
    dropped: int = 0
    """Connections the daemon closed (not the crowd's own hang-ups)."""
    told_why: int = 0
    """Of those, the ones that got a message (a JSON-RPC error) before the close."""


def opener(address: str, **options: Any) -> Opener:
    """How to open a connection to a daemon's address (`unix:PATH`, or `tcp:` or `tls:` and
    HOST:PORT), with asyncio's options (ssl=...: plain TCP without)."""
    scheme, _, rest = address.partition(":")
    if scheme == "unix":
        return lambda: asyncio.open_unix_connection(rest, **options)
    host, _, port = rest.rpartition(":")
    return lambda: asyncio.open_connection(host, int(port), **options)


async def crowd(
    open_connection: Opener, silent: int, trickling: int, reconnecting: int, stop: asyncio.Event
) -> Tally:
    """Run the crowd until stop is set; its tally."""
    tally = Tally()
    kinds = [_silent] * silent + [_trickling] * trickling + [_reconnecting] * reconnecting
    members = [asyncio.ensure_future(_member(kind, open_connection, tally, stop)) for kind in kinds]
    await stop.wait()
    for member in members:
        member.cancel()
    await asyncio.gather(*members, return_exceptions=True)
    return tally


async def _member(
    kind: Callable[[asyncio.StreamReader, asyncio.StreamWriter, Tally], Awaitable[None]],
    open_connection: Opener,
    tally: Tally,
    stop: asyncio.Event,
) -> None:
    while not stop.is_set():
        try:
            reader, writer = await open_connection()
        except OSError:
            tally.failed_connects += 1
            await asyncio.sleep(RETRY_SECONDS)
            continue
        tally.connects += 1
        try:
            await kind(reader, writer, tally)
        except OSError:
            tally.dropped += 1
        finally:
            writer.transport.abort()


async def _until_dropped(reader: asyncio.StreamReader, tally: Tally) -> None:
    said = await reader.read()
    tally.dropped += 1
    tally.told_why += b'"error"' in said


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tally: Tally) -> None:
    await _until_dropped(reader, tally)


async def _trickling(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tally: Tally
) -> None:
    dropped = asyncio.ensure_future(_until_dropped(reader, tally))
    try:
        for byte in TRICKLE:
            if dropped.done():
                break
            writer.write(bytes([byte]))
            await asyncio.wait([dropped], timeout=TRICKLE_SECONDS)
        await dropped
    finally:
        dropped.cancel()


async def _reconnecting(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tally: Tally
) -> None:
    with contextlib.suppress(TimeoutError):  # it hangs up first
        await asyncio.wait_for(_until_dropped(reader, tally), random.uniform(0, CHURN_SECONDS))


def main() -> None:
    """Run a crowd for --seconds, then print its tally as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.hostile_crowd", description=__doc__
    )
    parser.add_argument("address")
    parser.add_argument("--silent", type=int, default=0)
    parser.add_argument("--trickling", type=int, default=0)
    parser.add_argument("--reconnecting", type=int, default=0)
    parser.add_argument("--seconds", type=float, required=True)
    arguments = parser.parse_args()
    sockets = arguments.silent + arguments.trickling + arguments.reconnecting
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < sockets * 2 + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, sockets * 2 + 64), hard))

    async def run() -> Tally:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.call_later(arguments.seconds, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        return await crowd(
            opener(arguments.address),
            arguments.silent,
            arguments.trickling,
            arguments.reconnecting,
            stop,
        )

    print(json.dumps(asdict(asyncio.run(run()))), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
