"""The LSP features editors use, registered on one connection's server.

Each handler looks up the document, asks the connection's EditorConnection, and translates
the answer (translate.py). Commands map onto the method table, so they run under the same
write gate and return the same JSON as the methods they name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerNotInitialized
from pygls.workspace import TextDocument

from lazy_memory.rpc.editor import translate
from lazy_memory.rpc.editor.connection import EditorConnection
from lazy_memory.rpc.jsonrpc.methods import METHODS, Method
from lazy_memory.wire import names

if TYPE_CHECKING:
    from lazy_memory.rpc.jsonrpc.server import EngineServer

COMMANDS = {
    "lazy-memory.save": names.SAVE,
    "lazy-memory.rm": names.REMOVE,
    "lazy-memory.compact": names.COMPACT,
    "lazy-memory.doctor": names.DOCTOR,
    "lazy-memory.show": names.DOCUMENT,
}
"""workspace/executeCommand commands, each the method it runs with its one argument as params."""
TRIGGER_CHARACTERS = [":", "["]


def add_editor_features(server: EngineServer) -> None:
    """Register hover, completion, hints, lenses, diagnostics, links, symbols and commands."""

    def opened(uri: str) -> TextDocument:
        # Never pygls's get_text_document for a URI the client did not open: it reads the
        # file from disk, so a daemon client could make the engine read (or hang on) any path.
        document: TextDocument | None = server.workspace.text_documents.get(uri)
        if document is None:
            raise JsonRpcInvalidParams(f"{uri} is not open: send textDocument/didOpen first")
        return document

    def editor() -> EditorConnection:
        if server.editor is None:
            raise JsonRpcServerNotInitialized("send initialize first")
        return server.editor

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def document_changed(
        params: types.DidOpenTextDocumentParams | types.DidChangeTextDocumentParams,
    ) -> None:
        if server.editor is not None:
            document = opened(params.text_document.uri)
            await server.editor.publish_diagnostics(document)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        document = opened(params.text_document.uri)
        found = await server.answer("hover", editor().record_at(document, params.position))
        return None if found is None else translate.hover(document, *found)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS),
    )
    async def completion(params: types.CompletionParams) -> types.CompletionList | None:
        document = opened(params.text_document.uri)
        found = await server.answer("completion", editor().completion(document, params.position))
        if found is None:
            return None
        completion, entries, incomplete = found
        position = document.position_from_client_units(params.position)
        items = translate.completion_items(
            document, position.line, position.character, completion, entries
        )
        return types.CompletionList(is_incomplete=incomplete, items=items)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hints(params: types.InlayHintParams) -> list[types.InlayHint]:
        document = opened(params.text_document.uri)
        found = await server.answer("inlay hints", editor().live_references(document))
        return [translate.inlay_hint(document, *item) for item in found]

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lenses(params: types.CodeLensParams) -> list[types.CodeLens]:
        document = opened(params.text_document.uri)
        if editor().shows_inlay_hints:
            return []
        found = await server.answer("code lenses", editor().live_references(document))
        return [translate.code_lens(document, *item) for item in found]

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def document_links(params: types.DocumentLinkParams) -> list[types.DocumentLink]:
        document = opened(params.text_document.uri)
        found = await server.answer("document links", editor().live_references(document))
        return [translate.document_link(document, *item) for item in found]

    @server.feature(types.WORKSPACE_SYMBOL)
    async def symbols(params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        # Names matching as typed first (`dep` is no search word yet), then the search's hits.
        named = await server.answer("workspace symbols", editor().catalog.named(params.query))
        found = await server.answer("workspace symbols", editor().symbols(params.query))
        entries = {entry.name: entry for entry in [*named, *found]}
        return [translate.symbol(entry) for entry in entries.values()]

    for command, method in COMMANDS.items():
        server.command(command)(_command(server, command, METHODS[method]))


def _command(
    server: EngineServer, command: str, method: Method[Any, Any, Any]
) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def run(*arguments: Any) -> dict[str, Any]:
        if len(arguments) > 1:
            raise JsonRpcInvalidParams(f"{command} takes one argument: the params of {method.name}")
        return await server.call(method, arguments[0] if arguments else None)

    return run
