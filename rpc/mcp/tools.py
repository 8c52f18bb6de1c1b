"""The MCP tools: the memory store as an agent's model sees it.

Three tools, `lazy_memory_recall`, `lazy_memory_save` and `lazy_search` (declared in
rpc/mcp/catalog.py), each a thin call into MemoryService. Every failure reaches the model as an
error result (`isError`), never as a crash of the server; engine errors keep their own message,
which is written for the reader.

Every result is a prompt output: stored text in its text and in its structured content (which
Claude Code hands the model instead of the text) is made visible (engine/visible.py). The
verbatim record is the engine's (`lazy/memory/recall`) and the CLI's (`--json`, `--raw`).
A result is the JSON of MCP's `CallToolResult`; rpc/mcp/stdio.py serves it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from lazy_memory.engine.context import Role
from lazy_memory.engine.delivery import RECALL_PAGE
from lazy_memory.engine.delivery import page as page_of
from lazy_memory.engine.errors import InvalidRecord, LazyMemoryError
from lazy_memory.engine.index import shown_description
from lazy_memory.engine.records import Record
from lazy_memory.engine.service import MemoryService
from lazy_memory.engine.visible import visible_line, visible_text
from lazy_memory.rpc.mcp.arguments import ArgumentsRefused, checked_arguments
from lazy_memory.rpc.mcp.catalog import INPUT_SCHEMAS, RECALL, SAVE, SEARCH
from lazy_memory.rpc.mcp.protocol import ToolResult, internal_error, tool_error

logger = logging.getLogger(__name__)

SEARCH_PAGE = 20
"""Hits per page of lazy_search."""


class McpTools:
    """The tools, calling service; results paged at result_limit_chars.

    result_limit_chars is the largest tool result the harness shows whole when a tool declares
    it (`[claude_code] tool_result_limit_chars`): the index is paged at it.
    """

    def __init__(self, service: MemoryService, result_limit_chars: int) -> None:
        self.service = service
        self._page_limit = result_limit_chars
        self._role = Role.AGENT if service.identity.is_agent else Role.BUILDER
        self._tools: dict[str, Callable[..., Awaitable[ToolResult]]] = {
            RECALL: self.recall,
            SAVE: self.save,
            SEARCH: self.search,
        }

    async def call(self, tool: str, arguments: Any) -> ToolResult:
        """The result of calling tool with arguments: every failure is an error result."""
        implementation = self._tools.get(tool)
        if implementation is None:
            return tool_error(f"Unknown tool: {tool}")
        try:
            return await implementation(**checked_arguments(tool, INPUT_SCHEMAS[tool], arguments))
        except ArgumentsRefused as refusal:
            return tool_error(str(refusal))
        except LazyMemoryError as error:
            return tool_error(visible_text(error.message))
        except Exception as error:
            logger.exception("%s failed", tool)
            return internal_error(error)

    async def recall(self, name: str | None, page: int) -> ToolResult:
        """The launch context (a page of it), or one record in full."""
        # Models often fill an optional string with "" rather than leaving it out.
        if not name:
            text = (await self.service.launch_context(self._role)).text
            shown, total = page_of(text, self._page_limit, RECALL_PAGE, page)
            if shown is None:
                raise InvalidRecord(f"there is no page {page}: the index has {total}")
            # Text only: a structured copy is what Claude Code would show, and it is larger.
            return _text(shown)
        record = await self.service.recall(name)
        return _result(_record_text(record), record.model_dump(mode="json"))

    async def save(
        self, name: str, type: str, description: str, body: str, if_revision: int | None
    ) -> ToolResult:
        """Create or replace a record; agents are refused by the service's write gate."""
        record = await self.service.save(
            name, type=type, description=description, body=body, if_revision=if_revision
        )
        shown = visible_line(record.name)
        if record.unchanged:
            text = f"unchanged, revision {record.revision}: {shown} already held this content"
        else:
            text = f"saved {shown} ({record.type.value}) as revision {record.revision}"
        return _result(text, record.model_dump(mode="json"))

    async def search(self, query: str, page: int) -> ToolResult:
        """A page of the records the query finds, best first, each with its snippet."""
        hits, more = await self.service.search_page(query, page, SEARCH_PAGE)
        if not hits:
            text = f"No memory record matches {visible_line(query)}" + (
                f" on page {page}" if page > 1 else ""
            )
        else:
            text = "\n".join(
                f"- {visible_line(hit.name)} ({hit.type.value}): "
                f"{shown_description(hit.description)}\n  {visible_line(hit.snippet)}"
                for hit in hits
            )
        if more:
            text += (
                f"\n(page {page}: more records match; lazy_search(query=..., page={page + 1}) "
                "gives the next ones)"
            )
        structured = {"hits": [hit.model_dump(mode="json") for hit in hits], "page": page}
        return _result(text, {**structured, "more": more})


def _record_text(record: Record) -> str:
    return (
        f"---\nname: {visible_line(record.name)}\ntype: {record.type.value}\n"
        f"description: {visible_line(record.description)}\nrevision: {record.revision}\n"
        f"updated_by: {visible_line(str(record.updated_by))}\n"
        f"updated_at: {record.updated_at.isoformat(timespec='seconds')}\n---\n\n"
        f"{visible_text(record.body)}"
    )


def _text(text: str) -> ToolResult:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _result(text: str, structured: dict[str, Any]) -> ToolResult:
    # Claude Code hands the model the structured content alone when there is any, so it
    # carries everything the text does, made visible as the text is.
    return {**_text(text), "structuredContent": _visible_json(structured)}


def _visible_json(value: Any, key: str = "") -> Any:
    """A JSON value with every string made visible: a body keeps its lines, the rest one each."""
    if isinstance(value, str):
        return visible_text(value) if key == "body" else visible_line(value)
    if isinstance(value, dict):
        return {field: _visible_json(item, field) for field, item in value.items()}
    if isinstance(value, list):
        return [_visible_json(item, key) for item in value]
    return value
