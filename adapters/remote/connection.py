"""One JSON-RPC connection to a lazy engine daemon, on which every wait has a time limit.

Connecting (a TLS handshake included) and each request are bounded by the caller's timeout:
a daemon that is down fails at once, and one that takes the connection but never answers
fails when the time is up, with NoAnswer, instead of holding its client forever.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import ssl
import time
from typing import Any

from lazy_memory.adapters.address import Address
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.wire.framing import FramingError, frame, read_messages

_NAME_MISMATCHES = (62, 64)
"""OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and _IP_ADDRESS_MISMATCH: it is for another name."""

CLOSE_TIMEOUT_SECONDS = 2.0
"""How long a goodbye may take (a TLS close) before the connection is cut instead."""
FAREWELL_SECONDS = 0.5
"""How long a request that could not be sent waits for the daemon's last words to be read."""

logger = logging.getLogger(__name__)


def untrusted_certificate(address: Address, error: ssl.SSLCertVerificationError) -> str:
    """Why a TLS daemon's certificate was refused, and the setting that supplies the CA."""
    why = f"{error.reason}: {error.verify_message}"
    if error.verify_code in _NAME_MISMATCHES:
        return (
            f"the daemon at {address} presented a certificate for another host name ({why}): "
            "name the daemon as its certificate does in [remote] address (LAZY_REMOTE)"
        )
    return (
        f"the daemon at {address} presented a certificate this client does not trust ({why}): "
        "give the CA that signed it (for a self-signed daemon, its certificate) as [remote] "
        "ca_file in lazy.toml or LAZY_TLS_CA; without either, only the system's CAs are trusted"
    )


class ConnectionLost(Exception):
    """The daemon went away while a request was in flight."""


class NoAnswer(ConnectionLost):
    """The daemon kept the connection but did not answer in time."""


class DaemonConnection:
    """One JSON-RPC connection: requests matched to responses by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._active = time.monotonic()
        self._farewell: str | None = None
        self._receiving = asyncio.ensure_future(self._receive(reader))

    @classmethod
    async def open(
        cls, address: Address, ssl_context: ssl.SSLContext | None, within: float
    ) -> DaemonConnection:
        """Connect to address within that many seconds; OSError or ConnectionLost if not."""
        deadline = asyncio.timeout(within)
        try:
            async with deadline:
                reader, writer = await address.connect(ssl_context)
        except TimeoutError:
            if not deadline.expired():
                raise
            raise NoAnswer(f"connecting took over {within:g} s") from None
        except ssl.SSLCertVerificationError as error:
            # Not worth a retry, and not a daemon that is down: say which setting fixes it.
            raise StorageUnavailable(untrusted_certificate(address, error)) from None
        return cls(reader, writer)

    @property
    def quiet_seconds(self) -> float:
        """How long since a request was last sent or answered here (what a daemon's idle
        timeout counts; its notifications do not count)."""
        return time.monotonic() - self._active

    @property
    def alive(self) -> bool:
        """True until the connection is closed, cut, or broken from the daemon's end."""
        return not self._receiving.done() and not self._writer.is_closing()

    async def request(self, method: str, params: Any, within: float) -> dict[str, Any]:
        """The daemon's response to one request, within that many seconds (else NoAnswer)."""
        if not self.alive:
            raise ConnectionLost(self._closed())
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        # Sending is bounded too: a daemon that stopped reading fills the buffers.
        deadline = asyncio.timeout(within)
        self._active = time.monotonic()
        try:
            async with deadline:
                self._writer.write(frame(message))
                await self._writer.drain()
                return await future
        except OSError as error:  # TimeoutError among them
            if deadline.expired():
                raise NoAnswer(f"no answer to {method} within {within:g} s") from None
            # A daemon that said why it closes (at its connection limit) may have closed
            # before this request was sent: what it said is read, then it is the reason.
            await asyncio.wait([self._receiving], timeout=FAREWELL_SECONDS)
            if future.done() and not future.cancelled():
                future.exception()  # the same loss, told below: retrieved, never logged
            raise ConnectionLost(
                self._closed() if self._farewell else str(error) or type(error).__name__
            ) from None
        finally:
            self._pending.pop(message_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer is expected)."""
        self._writer.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def abort(self) -> None:
        """Cut the connection now; what is in flight on it fails with ConnectionLost."""
        self._receiving.cancel()
        self._writer.transport.abort()

    async def close(self) -> None:
        """Close the connection, cutting it if the goodbye takes too long."""
        self._receiving.cancel()
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), CLOSE_TIMEOUT_SECONDS)
        except (OSError, ssl.SSLError):  # the daemon closed its end first, or never will
            self._writer.transport.abort()

    async def _receive(self, reader: asyncio.StreamReader) -> None:
        def deliver(message: dict[str, Any]) -> None:
            error = message.get("error")
            if message.get("id") is None and isinstance(error, dict):
                # Said just before the daemon closes (it is at its connection limit): the
                # reason the requests in flight get.
                self._farewell = str(error.get("message"))
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                self._active = time.monotonic()
                future.set_result(message)

        def unanswerable(_: Any, code: int, text: str) -> None:
            logger.warning("the daemon sent a malformed message (%s): %s", code, text)

        try:
            # The daemon's answers are as big as the store (a whole history, every record): the
            # limit that guards the daemon from its clients does not apply to them.
            await read_messages(reader, deliver, unanswerable, max_bytes=None)
        except (FramingError, OSError) as error:
            logger.warning("the connection to the daemon broke: %s", error)
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionLost(self._closed()))

    def _closed(self) -> str:
        """Why requests on this connection fail now it is closed."""
        if self._farewell is None:
            return "the daemon closed the connection"
        return f"the daemon closed the connection ({self._farewell})"
