"""One connection's editor features: what they read from the store, and their refresh.

The handlers in features.py ask this object; it reads through the connection's service (so
identity and the write gate hold as everywhere) and its catalog, and when a record changes it
re-publishes the open documents' diagnostics and asks the client to refresh its hints.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import TextDocument

from lazy_memory.engine.constants import MAX_SEARCH_LIMIT
from lazy_memory.engine.errors import InvalidQuery, LazyMemoryError
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.ports import Change
from lazy_memory.engine.records import Record
from lazy_memory.engine.references import (
    Completion,
    Problem,
    Reference,
    completion_at,
    problem_with,
    reference_at,
    references_in,
)
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc.editor import translate
from lazy_memory.rpc.editor.catalog import Catalog

if TYPE_CHECKING:
    from lazy_memory.rpc.jsonrpc.server import EngineServer

COMPLETION_LIMIT = 200
"""Completions offered at most; more matches make the list incomplete, so typing narrows it."""
logger = logging.getLogger(__name__)


class EditorConnection:
    """The editor state of one connection, built once its service exists (at initialize)."""

    def __init__(self, server: EngineServer, service: MemoryService) -> None:
        self._server = server
        self._service = service
        self.catalog = Catalog(service)
        self._stale = False
        self._refreshing: asyncio.Future[None] | None = None

    @property
    def shows_inlay_hints(self) -> bool:
        """Whether the client declared inlay hints (else it gets code lenses instead)."""
        return self._server.client_capabilities.text_document is not None and (
            self._server.client_capabilities.text_document.inlay_hint is not None
        )

    async def record_at(
        self, document: TextDocument, position: types.Position
    ) -> tuple[Reference, Record] | None:
        """The live record referenced at the position, with its reference."""
        at = document.position_from_client_units(position)
        entries = await self.catalog.entries()
        reference = reference_at(document.lines, at.line, at.character, entries.__contains__)
        if reference is None:
            return None
        record = await self._service.recall_if_live(reference.name)
        return None if record is None else (reference, record)

    async def completion(
        self, document: TextDocument, position: types.Position
    ) -> tuple[Completion, list[IndexEntry], bool] | None:
        """What to complete at the position, the records that fit, and whether more do."""
        at = document.position_from_client_units(position)
        lines = document.lines
        completion = completion_at(lines[at.line] if at.line < len(lines) else "", at.character)
        if completion is None:
            return None
        prefix = completion.prefix.lower()
        entries = await self.catalog.entries()
        fitting = [entry for name, entry in entries.items() if name.lower().startswith(prefix)]
        fitting += [
            entry
            for name, entry in entries.items()
            if prefix in name.lower() and not name.lower().startswith(prefix)
        ]
        return completion, fitting[:COMPLETION_LIMIT], len(fitting) > COMPLETION_LIMIT

    async def live_references(self, document: TextDocument) -> list[tuple[Reference, IndexEntry]]:
        """Every written reference to a live record in the document, with the record."""
        entries = await self.catalog.entries()
        return [
            (reference, entries[reference.name])
            for reference in references_in(document.lines)
            if reference.name in entries
        ]

    async def problems(self, document: TextDocument) -> list[tuple[Reference, Problem]]:
        """Every written reference to a record that is unknown or removed."""
        entries = await self.catalog.entries()
        found = []
        for reference in references_in(document.lines):
            if reference.name in entries:
                continue
            ever_written = await self.catalog.ever_written(reference.name)
            problem = problem_with(reference, entries.__contains__, ever_written)
            if problem is not None:
                found.append((reference, problem))
        return found

    async def symbols(self, query: str) -> Sequence[IndexEntry]:
        """Records for a workspace symbol query: a search, or a name match while it is partial."""
        entries = await self.catalog.entries()
        if not query.strip():
            return list(entries.values())
        try:
            hits = await self._service.search(query, MAX_SEARCH_LIMIT)
        except InvalidQuery:
            # Symbol queries arrive as the user types: `type:` alone is not a query yet.
            return [entry for name, entry in entries.items() if query.lower() in name.lower()]
        return [entries[hit.name] for hit in hits if hit.name in entries]

    async def publish_diagnostics(self, document: TextDocument) -> None:
        """Send the document's reference problems (none is sent too, clearing old ones)."""
        try:
            found = await self.problems(document)
        except LazyMemoryError as error:
            logger.warning("no diagnostics for %s: %s", document.uri, error.message)
            return
        self._server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=document.uri,
                version=document.version,
                diagnostics=[translate.diagnostic(document, *item) for item in found],
            )
        )

    def record_changed(self, change: Change) -> None:
        """A record changed somewhere: forget the catalog, then refresh the client once."""
        self.catalog.forget()
        self._stale = True
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._refresh())

    async def _refresh(self) -> None:
        while self._stale:
            self._stale = False
            for document in list(self._server.workspace.text_documents.values()):
                await self.publish_diagnostics(document)
        workspace = self._server.client_capabilities.workspace
        if workspace is not None and workspace.inlay_hint and workspace.inlay_hint.refresh_support:
            self._server.workspace_inlay_hint_refresh(None)
        if workspace is not None and workspace.code_lens and workspace.code_lens.refresh_support:
            self._server.workspace_code_lens_refresh(None)
