"""The engine: a pygls language server answering the method table for one connection.

`build_server` makes one server per connection (stdio has one; the daemon one per client),
all sharing a storage. A connection's identity is fixed at `initialize` by its Session's
authenticator and never changes; requests before it are refused. When the storage is a
ChangeFeed, each initialized client is sent a `lazy/memory/changed` notification for every
write committed to the store, by any process.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerError,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method

from lazy_memory.engine.errors import (
    LazyMemoryError,
    PermissionDenied,
    StorageUnavailable,
    reported_name,
)
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import Change, ChangeFeed, Storage
from lazy_memory.engine.records import Operation
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc.editor.connection import EditorConnection
from lazy_memory.rpc.editor.features import add_editor_features
from lazy_memory.rpc.jsonrpc.methods import METHODS, Method
from lazy_memory.rpc.jsonrpc.pygls_io import converter, send_once
from lazy_memory.rpc.jsonrpc.pygls_private import (
    HookedProtocol,
    forget_finished,
    in_flight,
    is_shut_down,
    mark_shut_down,
)
from lazy_memory.rpc.jsonrpc.storage_methods import STORAGE_METHODS
from lazy_memory.rpc.lifecycle import DRAIN_SECONDS
from lazy_memory.wire.errors import PARSE_ERROR
from lazy_memory.wire.framing import FramingError, Reader, frame, read_messages
from lazy_memory.wire.names import MEMORY_CHANGED, RECORD_WRITES, STORAGE_WRITES

SERVER_NAME = "lazy-memory"
logger = logging.getLogger(__name__)
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Grant:
    """What a connection may do: its identity, and whether it may use the storage methods.

    Storage access (`lazy/storage/*`) is for a trusted peer, another lazy process using this
    engine as its storage backend: it writes as the actors of its own sessions, so it is
    trusted like a holder of the database file. Every other client is its token's identity.
    """

    identity: Identity
    storage_access: bool = False
    storage_reads: bool = False
    """The storage methods that only read, for an agent's own lazy processes on the remote
    backend (`LAZY_STORAGE=remote` with an agent token): they read as the storage does."""


Authenticator = Callable[[Any], Grant]
"""Maps a client's `initializationOptions` to its grant, or raises PermissionDenied."""


@dataclass(frozen=True)
class Session:
    """What every connection of one engine process shares."""

    storage: Storage
    new_service: Callable[[Identity], MemoryService]
    authenticate: Authenticator
    version: str = "0"
    feed: ChangeFeed | None = None
    """Where the engine hears of committed writes, this process's and others'."""


@runtime_checkable
class Pollable(Protocol):
    """A change feed that polls the store, so it must be told of this process's writes."""

    async def poll(self) -> None:
        """Announce every change committed since the last look."""
        ...

    def announce(self, change: Change) -> None:
        """Announce a write this process made."""
        ...


_TABLE: dict[str, Method[Any, Any, Any]] = {**METHODS, **STORAGE_METHODS}


class EngineServer(LanguageServer):
    """One connection's server: its protocol, and its service once initialized."""

    stopping = False
    """True once the process is stopping: requests read from then on are refused unrun."""

    def __init__(self, session: Session) -> None:
        super().__init__(
            SERVER_NAME,
            session.version,
            protocol_cls=EngineProtocol,
            converter_factory=converter,
        )
        self.session = session
        self.service: MemoryService | None = None
        self.grant: Grant | None = None
        self.editor: EditorConnection | None = None
        self.closed = asyncio.Event()
        self.last_active = time.monotonic()
        """When the client last sent a well-formed message or got an answer (monotonic)."""

    @property
    def busy(self) -> bool:
        """True while a request or notification of this client is still being handled."""
        return any(not future.done() for future in in_flight(self.protocol))

    @property
    def shut_down(self) -> bool:
        """True once the client has sent shutdown (so exit is a clean one)."""
        return is_shut_down(self.protocol)

    async def stop(self, seconds: float = DRAIN_SECONDS) -> None:
        """Refuse new requests, and give those already running seconds to be answered.

        One cancelled later may have written unacknowledged; one refused was never run.
        """
        self.stopping = True
        await self.answer_running(seconds)

    async def answer_running(self, seconds: float | None = None) -> None:
        """Wait (at most seconds) until what the client sent, the caller aside, is answered.

        Of what pygls holds in flight, the server's own requests are left: only the client
        can end them.
        """
        futures = in_flight(self.protocol)
        current = asyncio.current_task()
        running = [f for f in futures if isinstance(f, asyncio.Task) and not f.done()]
        running = [task for task in running if task is not current]
        if running:
            await asyncio.wait(running, timeout=seconds)

    def announce_change(self, change: Change) -> None:
        """Tell this connection's client that a record changed, once it has initialized."""
        if self.service is not None and not self.closed.is_set():
            self.protocol.notify(MEMORY_CHANGED, change.model_dump(mode="json"))
        if self.editor is not None:
            self.editor.record_changed(change)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls reports every failed request here; ours are answered, so only debug it."""
        logger.debug("request failed: %s", type(error).__name__)

    async def call(self, method: Method[Any, Any, Any], params: Any) -> dict[str, Any]:
        """Run one table method for this connection, mapping errors to JSON-RPC errors."""
        if self.service is None or self.grant is None:
            raise JsonRpcServerNotInitialized("send initialize first")
        if method.name in STORAGE_METHODS:
            reads = self.grant.storage_reads and method.name not in STORAGE_WRITES
            if not (self.grant.storage_access or reads):
                why = "needs an engine token"
                if self.grant.storage_reads:
                    why = "writes, and agent tokens are read-only"
                raise rpc_error(PermissionDenied(f"{method.name} {why}"))
            result = await self.answer(method.name, method(self.session.storage, params))
        else:
            result = await self.answer(method.name, method(self.service, params))
        # A polling feed is told of each record write from its result.
        if method.name in RECORD_WRITES and isinstance(self.session.feed, Pollable):
            await _tell_feed(self.session.feed, result)
        return result

    async def answer(self, what: str, work: Awaitable[ResultT]) -> ResultT:
        """Await work for a request, mapping every failure to a JSON-RPC error."""
        try:
            return await work
        except ValidationError as error:
            raise JsonRpcInvalidParams(
                f"invalid params for {what}: {_first_problem(error)}",
                data={"errors": error.errors(include_url=False, include_input=False)},
            ) from None
        except LazyMemoryError as error:
            raise rpc_error(error) from None
        except JsonRpcException:
            raise
        except Exception:
            logger.exception("%s failed", what)
            raise JsonRpcInternalError(f"{what} failed; the engine log has why") from None


class EngineProtocol(HookedProtocol):
    """LSP, except that exit closes this connection instead of ending the process."""

    @property
    def engine(self) -> EngineServer:
        """This connection's server."""
        server: EngineServer = self.owner
        return server

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """Close this connection; the daemon's other clients carry on."""
        self.engine.closed.set()
        yield from ()

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """Answer the requests still running, then shutdown; refuse any sent after it.

        pygls cancels them (-32800): a save among them may have written unacknowledged.
        """
        mark_shut_down(self)
        yield self.engine.answer_running, (), None

    def handle_message(self, message: Any) -> None:
        """Answer a request this connection may not make yet (or any more) with an error."""
        self.engine.last_active = time.monotonic()
        forget_finished(self)
        message_id = getattr(message, "id", None)
        refusal = self._refusal(getattr(message, "method", None))
        if refusal is not None and message_id is not None:
            self.refuse(message_id, refusal.to_response_error())
            return
        super().handle_message(message)

    def _refusal(self, method: str | None) -> JsonRpcException | None:
        """Only initialize and shutdown before initialize; never initialize again after it,
        as a connection's identity never changes."""
        initialized = self.engine.service is not None
        if method is None:
            return None
        if not initialized and method not in (types.INITIALIZE, types.EXIT, types.SHUTDOWN):
            return JsonRpcServerNotInitialized("send initialize first (with a valid token)")
        if initialized and method == types.INITIALIZE:
            return JsonRpcInvalidRequest("this connection is initialized already")
        if is_shut_down(self) and method != types.EXIT:
            return JsonRpcInvalidRequest("this connection is shut down: only exit may follow")
        if self.engine.stopping and method not in (types.EXIT, types.SHUTDOWN):
            stopping = "the engine is stopping: this request was not run; send it again"
            return rpc_error(StorageUnavailable(stopping))
        return None

    def answered(self) -> None:
        """An answer restarts the connection's idle time."""
        self.engine.last_active = time.monotonic()

    def sent_own_way(self, data: Any, serialize: Callable[[Any], Any]) -> bool:
        """A result in plain JSON (every table method's) is written once
        (rpc/jsonrpc/pygls_io.py); anything else pygls sends."""
        try:
            return send_once(self.writer, data, serialize, self.CONTENT_TYPE, self.CHARSET)
        except BrokenPipeError:
            logger.debug("the client is gone: its answer could not be sent")
            raise
        except Exception as error:
            self.engine.report_server_error(error, JsonRpcInternalError)
            return True

    def own_handler(self, method: str) -> Any:
        """The table's methods; the rest (LSP's and the editor's) are registered with pygls.

        Registering the table on every connection's server cost a daemon ~3 ms and ~20 KB a
        connection (pygls inspects each handler's signature and type hints).
        """
        table_method = _TABLE.get(method)
        return None if table_method is None else _handler(self.engine, table_method)

    # pygls caches these two with lru_cache on the method (hence the ignored override): its
    # 128 entries, keyed by the protocol, kept the last 64 connections' servers alive.
    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        """The lsprotocol type of method's params, if LSP defines the method."""
        return types.METHOD_TO_TYPES.get(method, (None,))[0]

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]
        """The lsprotocol type of method's result, if LSP defines the method."""
        return types.METHOD_TO_TYPES.get(method, (None, None))[1]


def rpc_error(error: LazyMemoryError) -> JsonRpcServerError:
    """The one mapping of engine errors to JSON-RPC errors: stable code; type (and the
    error's own data, such as a rejected compact's fallback reason) in data."""
    data = {"type": reported_name(error), **error.data}
    return JsonRpcServerError(error.message, error.code, data=data)  # type: ignore[no-untyped-call]


def build_server(session: Session) -> EngineServer:
    """A server for one connection, answering LSP's lifecycle and every table method."""
    server = EngineServer(session)

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        try:
            grant = session.authenticate(params.initialization_options)
        except LazyMemoryError as error:
            server.closed.set()
            raise rpc_error(error) from None
        server.grant = grant
        server.service = session.new_service(grant.identity)
        server.editor = EditorConnection(server, server.service)

    # The table's methods are not registered here: EngineProtocol finds them itself.
    add_editor_features(server)
    return server


async def serve_connection(
    server: EngineServer, reader: Reader, write: Callable[[bytes], Any]
) -> None:
    """Serve one client until it exits, disconnects, or breaks the framing."""

    protocol = server.protocol
    protocol.set_writer(_Writer(write, server.closed))

    def deliver(message: dict[str, Any]) -> None:
        try:
            protocol.handle_message(protocol.structure_message(message))
        except JsonRpcException as error:
            reply_error(message.get("id"), error.code, error.message)

    def reply_error(message_id: Any, code: int, text: str) -> None:
        write(frame({"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}))

    feed = server.session.feed
    if feed is not None:
        await feed.subscribe(server.announce_change)
    reading = asyncio.ensure_future(read_messages(reader, deliver, reply_error))
    closing = asyncio.ensure_future(server.closed.wait())
    try:
        await asyncio.wait({reading, closing}, return_when=asyncio.FIRST_COMPLETED)
        if reading.done() and (error := reading.exception()) is not None:
            if isinstance(error, FramingError):
                reply_error(None, PARSE_ERROR, f"{error}; closing the connection")
            else:
                raise error
    finally:
        for task in (reading, closing):
            task.cancel()
        if feed is not None:
            await feed.unsubscribe(server.announce_change)


async def _tell_feed(feed: Pollable, result: dict[str, Any]) -> None:
    """Announce a write from its result: a record or history entry names the one change;
    an import's result does not, so the feed looks at the store instead."""
    if "name" in result and "revision" in result:
        operation = result.get("operation", Operation.SAVE)
        feed.announce(Change(name=result["name"], revision=result["revision"], operation=operation))
    else:
        await feed.poll()


class _Writer:
    """Where pygls writes a connection's messages; its close ends the connection."""

    def __init__(self, write: Callable[[bytes], Any], closed: asyncio.Event) -> None:
        self.write = write
        self._closed = closed

    def close(self) -> None:
        self._closed.set()


def _handler(server: EngineServer, method: Method[Any, Any, Any]) -> Callable[[Any], Any]:
    async def handle(params: Any) -> dict[str, Any]:
        return await server.call(method, params)

    return handle


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"]) or "params"
    return f"{location}: {first['msg']}"
