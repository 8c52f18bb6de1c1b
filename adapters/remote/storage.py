"""The remote backend: the Storage port as a JSON-RPC client of a lazy engine daemon.

Like every client, it is built against the wire contract (wire/: the `lazy/storage/*`
names, params and results, the error codes and the framing), which imports neither pygls
nor anything heavy. The daemon must
grant this connection storage access: its token has the `engine` role.

Nothing waits on the daemon without a bound: connecting and `initialize`, retries included,
take the connect timeout at most; a request the request timeout, after which its connection
is dropped (a mute daemon is owed no goodbye) and the next request opens a new one.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import ssl
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from lazy_memory.adapters.address import Address, parse_address
from lazy_memory.adapters.config import (
    DEFAULT_CONNECT_TIMEOUT_SECONDS,
    DEFAULT_REQUEST_TIMEOUT_SECONDS,
)
from lazy_memory.adapters.remote.connection import ConnectionLost, DaemonConnection, NoAnswer
from lazy_memory.adapters.remote.errors import read_of_many, typed_error
from lazy_memory.engine.errors import PermissionDenied, StorageUnavailable
from lazy_memory.wire.params import Params
from lazy_memory.wire.storage_contract import ArgsP, ForwardingStorage, ReturnT, StorageMethod

logger = logging.getLogger(__name__)

CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_SECONDS = 0.2
QUIET_BEFORE_WRITE_SECONDS = 1.0
"""A connection quiet this long is checked with a read before a write is sent on it."""


class State(enum.Enum):
    """Where the connection to the daemon stands."""

    DISCONNECTED = "disconnected"
    READY = "ready"
    CLOSED = "closed"


class RemoteStorage(ForwardingStorage):
    """The Storage port over a daemon connection, reconnecting when the daemon comes back.

    Each port method is a row of the storage contract (wire/storage_contract.py), sent as its
    `lazy/storage/*` request by _forward.

    Reads are retried once on a fresh connection if the old one broke; a write whose
    connection broke mid-flight is not, since it may already have been applied, nor is a
    request the daemon left unanswered past the request timeout.
    """

    def __init__(
        self,
        address: Address,
        token: str,
        ssl_context: ssl.SSLContext | None,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self.address = address
        self.state = State.DISCONNECTED
        self._token = token
        self._ssl_context = ssl_context
        self._connect_timeout = connect_timeout
        self._request_timeout = request_timeout
        self._connection: DaemonConnection | None = None
        self._connecting = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        address: str,
        token: str | None,
        ca_file: Path | None,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_SECONDS,
    ) -> RemoteStorage:
        """Connect to the daemon at address (unix:PATH, tcp:HOST:PORT or tls:HOST:PORT)."""
        if not token:
            raise StorageUnavailable("the remote backend needs a token: set LAZY_TOKEN")
        parsed = parse_address(address)
        storage = cls(
            parsed,
            token,
            _client_ssl_context(parsed, ca_file),
            connect_timeout=connect_timeout,
            request_timeout=request_timeout,
        )
        await storage._connected()
        return storage

    async def aclose(self) -> None:
        """Say goodbye to the daemon and close the connection."""
        self.state = State.CLOSED
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if connection.alive:
            try:
                await connection.request("shutdown", None, self._connect_timeout)
                connection.notify("exit")
            except ConnectionLost:
                connection.abort()  # closing anyway, without waiting on the daemon again
        await connection.close()

    async def _forward(
        self, method: StorageMethod[ArgsP, ReturnT], *args: ArgsP.args, **kwargs: ArgsP.kwargs
    ) -> ReturnT:
        """method's call on the daemon's store: its params sent, its result read back."""
        answer = await self._call(method, method.params_of(*args, **kwargs))
        try:
            returned, unreadable = method.returned(answer)
        except (TypeError, ValueError, KeyError) as error:
            raise self._unexpected(method, error) from None
        return read_of_many(self.address, returned, unreadable)

    async def _call(self, method: StorageMethod[Any, Any], params: Params) -> BaseModel:
        raw = params.model_dump(mode="json")
        if method.write:
            await self._awake()
        try:
            response = await self._request(method.wire_name, raw)
        except ConnectionLost as error:
            if method.write or isinstance(error, NoAnswer):
                # A mute daemon is not asked again: that would double the wait.
                raise self._lost(method.name, error, write=method.write) from None
            try:
                response = await self._request(method.wire_name, raw)
            except ConnectionLost as again:
                raise self._lost(method.name, again, write=False) from None
        if "error" in response:
            raise typed_error(response["error"], self.address)
        try:
            return method.result.model_validate(response.get("result"))
        except ValidationError as error:
            raise self._unexpected(method, error.errors()[0]["msg"]) from None

    def _unexpected(self, method: StorageMethod[Any, Any], error: object) -> StorageUnavailable:
        return StorageUnavailable(
            f"the daemon at {self.address} answered {method.name} with an unexpected shape: {error}"
        )

    async def _request(self, method: str, params: Any) -> dict[str, Any]:
        """One request on the live connection; one that broke or went mute is dropped."""
        connection = await self._connected()
        try:
            return await connection.request(method, params, self._request_timeout)
        except ConnectionLost:
            self.state = State.DISCONNECTED
            if self._connection is connection:
                self._connection = None
            connection.abort()
            raise

    async def _awake(self) -> None:
        """Make sure a connection that was quiet is still open before a write goes on it.

        The daemon closes connections idle for its idle timeout: a write sent as it does would
        be lost with no way to tell whether it was applied. A read first (retried on a new
        connection if this one was closed) makes the connection fresh again.
        """
        connection = self._connection
        if connection is not None and connection.quiet_seconds > QUIET_BEFORE_WRITE_SECONDS:
            await self.change_marker()

    def _lost(self, method: str, error: ConnectionLost, *, write: bool) -> StorageUnavailable:
        if isinstance(error, NoAnswer):
            outcome = "; it may or may not have been applied" if write else ""
            return StorageUnavailable(
                f"the daemon at {self.address} gave {error} ([remote] request_timeout_seconds): "
                f"dropped the connection, the next request opens a new one{outcome}"
            )
        if write:
            return StorageUnavailable(
                f"lost the connection to the daemon at {self.address} during {method} "
                f"({error}); it may or may not have been applied"
            )
        return self._unreachable(error)

    async def _connected(self) -> DaemonConnection:
        """The live connection, opening (and initializing) a new one if needed."""
        async with self._connecting:
            if self._connection is not None and self._connection.alive:
                return self._connection
            if self.state is State.CLOSED:
                raise StorageUnavailable("the remote store has been closed")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self._connect_timeout
            last_error: Exception | None = None
            for attempt in range(CONNECT_ATTEMPTS):
                if attempt:
                    pause = CONNECT_BACKOFF_SECONDS * 2 ** (attempt - 1)
                    if loop.time() + pause >= deadline:
                        break  # no time left for another try
                    await asyncio.sleep(pause)
                try:
                    self._connection = await self._initialized_connection(deadline)
                except (OSError, ConnectionLost, ssl.SSLError) as error:
                    last_error = error
                    continue
                self.state = State.READY
                return self._connection
            raise self._unreachable(last_error)

    async def _initialized_connection(self, deadline: float) -> DaemonConnection:
        """A connection that has answered initialize, or an error, by deadline (loop time)."""
        loop = asyncio.get_running_loop()
        within = f"within {self._connect_timeout:g} s (connect_timeout_seconds)"
        try:
            connection = await DaemonConnection.open(
                self.address, self._ssl_context, deadline - loop.time()
            )
        except NoAnswer:
            raise NoAnswer(f"connecting did not finish {within}") from None
        try:
            response = await connection.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "clientInfo": {"name": "lazy-memory remote backend"},
                    "capabilities": {},
                    "initializationOptions": {"token": self._token},
                },
                deadline - loop.time(),
            )
        except ConnectionLost as lost:
            connection.abort()
            if isinstance(lost, NoAnswer):
                raise NoAnswer(
                    f"it accepted the connection but did not answer initialize {within}"
                ) from None
            raise
        if "error" in response:
            await connection.close()
            error = typed_error(response["error"], self.address)
            if isinstance(error, PermissionDenied):
                raise PermissionDenied(
                    f"the daemon at {self.address} refused LAZY_TOKEN: {error.message}"
                )
            raise error
        connection.notify("initialized", {})
        return connection

    def _unreachable(self, error: Exception | None) -> StorageUnavailable:
        return StorageUnavailable(
            f"cannot reach the lazy-memory daemon at {self.address}: {error}; is "
            f"`lazy engine --listen {self.address}` running?"
        )


def _client_ssl_context(address: Address, ca_file: Path | None) -> ssl.SSLContext | None:
    if not address.tls:
        return None
    try:
        return ssl.create_default_context(cafile=None if ca_file is None else str(ca_file))
    except (OSError, ssl.SSLError) as error:
        raise StorageUnavailable(f"cannot load the CA file {ca_file}: {error}") from None
