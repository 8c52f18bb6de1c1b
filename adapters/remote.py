"""The remote backend: the Storage port as a JSON-RPC client of a lazy engine daemon.

Like every client, it is built against the wire contract in rpc/ (the `lazy/storage/*`
table and the framing), which imports neither pygls nor anything heavy. The daemon must
grant this connection storage access: its token has the `engine` role.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import os
import ssl
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from lazy_memory.adapters.address import Address, parse_address
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import (
    LazyMemoryError,
    PermissionDenied,
    StorageUnavailable,
    error_for_code,
)
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import Actor, HistoryEntry, Operation, Record, RecordContent
from lazy_memory.engine.search import SearchHit, SearchQuery
from lazy_memory.rpc.framing import FramingError, frame, read_messages
from lazy_memory.rpc.methods import HistoryParams, NameParams, NoParams, Params, SearchResult
from lazy_memory.rpc.storage_methods import (
    CompactSlotResult,
    Done,
    EntriesResult,
    IndexResult,
    MarkerResult,
    NamesResult,
    PutCompactParams,
    RecordsResult,
    RemoveRecordParams,
    RevisionsResult,
    SaveRecordParams,
    StorageSearchParams,
    WatermarkParams,
)

ResultT = TypeVar("ResultT", bound=BaseModel)
logger = logging.getLogger(__name__)

CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_SECONDS = 0.2
REQUEST_TIMEOUT_SECONDS = 60.0


class State(enum.Enum):
    """Where the connection to the daemon stands."""

    DISCONNECTED = "disconnected"
    READY = "ready"
    CLOSED = "closed"


class ConnectionLost(Exception):
    """The daemon went away while a request was in flight."""


class _Connection:
    """One initialized JSON-RPC connection: requests matched to responses by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._receiving = asyncio.ensure_future(self._receive(reader))

    @property
    def alive(self) -> bool:
        return not self._receiving.done() and not self._writer.is_closing()

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        if not self.alive:
            raise ConnectionLost("the connection is closed")
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        try:
            self._writer.write(frame(message))
            await self._writer.drain()
            return await asyncio.wait_for(future, REQUEST_TIMEOUT_SECONDS)
        except (OSError, TimeoutError) as error:
            raise ConnectionLost(str(error) or type(error).__name__) from None
        finally:
            self._pending.pop(message_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        self._writer.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def close(self) -> None:
        self._receiving.cancel()
        self._writer.close()
        # The daemon may already have closed its end.
        with contextlib.suppress(OSError, ssl.SSLError):
            await self._writer.wait_closed()

    async def _receive(self, reader: asyncio.StreamReader) -> None:
        def deliver(message: dict[str, Any]) -> None:
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
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
                    future.set_exception(ConnectionLost("the daemon closed the connection"))


class RemoteStorage:
    """The Storage port over a daemon connection, reconnecting when the daemon comes back.

    Reads are retried once on a fresh connection if the old one broke; a write whose
    connection broke mid-flight is not, since it may already have been applied.
    """

    def __init__(self, address: Address, token: str, ssl_context: ssl.SSLContext | None) -> None:
        self.address = address
        self.state = State.DISCONNECTED
        self._token = token
        self._ssl_context = ssl_context
        self._connection: _Connection | None = None
        self._connecting = asyncio.Lock()

    @classmethod
    async def open(cls, address: str, token: str | None, ca_file: Path | None) -> RemoteStorage:
        """Connect to the daemon at address (unix:PATH, tcp:HOST:PORT or tls:HOST:PORT)."""
        if not token:
            raise StorageUnavailable("the remote backend needs a token: set LAZY_TOKEN")
        parsed = parse_address(address)
        storage = cls(parsed, token, _client_ssl_context(parsed, ca_file))
        await storage._connected()
        return storage

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        return (await self._call("list_records", NoParams(), RecordsResult)).records

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry, ordered by name."""
        return (await self._call("list_index", NoParams(), IndexResult)).entries

    async def change_marker(self) -> str:
        """The daemon's store's change marker."""
        return (await self._call("change_marker", NoParams(), MarkerResult)).marker

    async def get_record(self, name: str) -> Record:
        """The live record called name."""
        return await self._call("get_record", NameParams(name=name), Record)

    async def save_record(
        self,
        content: RecordContent,
        *,
        actor: Actor,
        at: datetime,
        operation: Operation = Operation.SAVE,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record on the daemon's store."""
        params = SaveRecordParams(
            content=content, actor=actor, at=at, operation=operation, if_revision=if_revision
        )
        return await self._call("save_record", params, Record, write=True)

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record on the daemon's store."""
        params = RemoveRecordParams(name=name, actor=actor, at=at)
        return await self._call("remove_record", params, HistoryEntry, write=True)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in write order, or those of one name."""
        return (await self._call("history", HistoryParams(name=name), EntriesResult)).entries

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        return (await self._call("live_revisions", NoParams(), RevisionsResult)).revisions

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now."""
        params = WatermarkParams(watermark=dict(watermark))
        return (await self._call("removed_since", params, NamesResult)).names

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, as the daemon's store ranks them."""
        params = StorageSearchParams(query=query, limit=limit)
        return (await self._call("search", params, SearchResult)).hits

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, if any."""
        return (await self._call("get_compact", NoParams(), CompactSlotResult)).compact

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot."""
        await self._call("put_compact", PutCompactParams(compact=compact), Done, write=True)

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        await self._call("clear_compact", NoParams(), Done, write=True)

    async def aclose(self) -> None:
        """Say goodbye to the daemon and close the connection."""
        self.state = State.CLOSED
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if connection.alive:
            try:
                await connection.request("shutdown", None)
                connection.notify("exit")
            except ConnectionLost:
                pass  # closing anyway
        await connection.close()

    async def _call(
        self, method: str, params: Params, result: type[ResultT], *, write: bool = False
    ) -> ResultT:
        name = f"lazy/storage/{method}"
        raw = params.model_dump(mode="json")
        try:
            response = await (await self._connected()).request(name, raw)
        except ConnectionLost as error:
            self.state = State.DISCONNECTED
            if write:
                raise StorageUnavailable(
                    f"lost the connection to the daemon at {self.address} during {method} "
                    f"({error}); it may or may not have been applied"
                ) from None
            try:
                response = await (await self._connected()).request(name, raw)
            except ConnectionLost as again:
                self.state = State.DISCONNECTED
                raise self._unreachable(again) from None
        if "error" in response:
            raise _typed_error(response["error"], self.address)
        try:
            return result.model_validate(response.get("result"))
        except ValidationError as error:
            raise StorageUnavailable(
                f"the daemon at {self.address} answered {method} with an unexpected shape: "
                f"{error.errors()[0]['msg']}"
            ) from None

    async def _connected(self) -> _Connection:
        """The live connection, opening (and initializing) a new one if needed."""
        async with self._connecting:
            if self._connection is not None and self._connection.alive:
                return self._connection
            if self.state is State.CLOSED:
                raise StorageUnavailable("the remote store has been closed")
            last_error: Exception | None = None
            for attempt in range(CONNECT_ATTEMPTS):
                if attempt:
                    await asyncio.sleep(CONNECT_BACKOFF_SECONDS * 2 ** (attempt - 1))
                try:
                    self._connection = await self._initialized_connection()
                except (OSError, ConnectionLost, ssl.SSLError) as error:
                    last_error = error
                    continue
                self.state = State.READY
                return self._connection
            raise self._unreachable(last_error)

    async def _initialized_connection(self) -> _Connection:
        reader, writer = await asyncio.wait_for(self.address.connect(self._ssl_context), 10)
        connection = _Connection(reader, writer)
        response = await connection.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "lazy-memory remote backend"},
                "capabilities": {},
                "initializationOptions": {"token": self._token},
            },
        )
        if "error" in response:
            await connection.close()
            error = _typed_error(response["error"], self.address)
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


def _typed_error(error: Mapping[str, Any], address: Address) -> LazyMemoryError:
    code, message = error.get("code"), str(error.get("message", "no message"))
    typed = error_for_code(code, message) if isinstance(code, int) else None
    return typed or StorageUnavailable(f"the daemon at {address} failed: {message} ({code})")


def _client_ssl_context(address: Address, ca_file: Path | None) -> ssl.SSLContext | None:
    if not address.tls:
        return None
    try:
        return ssl.create_default_context(cafile=None if ca_file is None else str(ca_file))
    except (OSError, ssl.SSLError) as error:
        raise StorageUnavailable(f"cannot load the CA file {ca_file}: {error}") from None
