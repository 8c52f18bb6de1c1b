"""The MCP tool surface: the memory store as an agent's model sees it.

Three tools, `lazy_memory_recall`, `lazy_memory_save` and `lazy_search`, each a thin call into
MemoryService. Every failure reaches the model as an error result (`isError`), never as a
crash of the server; engine errors keep their own message, which is written for the reader.

Every result is a prompt output: stored text in its text and in its structured content (which
Claude Code hands the model instead of the text) is made visible (engine/visible.py). The
verbatim record is the engine's (`lazy/memory/recall`) and the CLI's (`--json`, `--raw`).
The server is served on stdio by rpc/mcp_stdio.py, the one seam onto the SDK's transport.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from lazy_memory.engine.context import Role
from lazy_memory.engine.delivery import RECALL_PAGE
from lazy_memory.engine.delivery import page as page_of
from lazy_memory.engine.errors import InvalidRecord, LazyMemoryError
from lazy_memory.engine.index import shown_description
from lazy_memory.engine.records import Record
from lazy_memory.engine.service import MemoryService
from lazy_memory.engine.visible import visible_line, visible_text
from lazy_memory.rpc.mcp_arguments import exact_tool

logger = logging.getLogger(__name__)

_P = ParamSpec("_P")
SEARCH_PAGE = 20
"""Hits per page of lazy_search."""

_INSTRUCTIONS = (
    "The shared memory of this project's coding agents: small named records that outlive "
    "sessions. Read the index with lazy_memory_recall(), a record in full with "
    'lazy_memory_recall(name=...), and search them with lazy_search(query="in:memories ...").'
)


def build_mcp_server(
    service: MemoryService, result_limit_chars: int, version: str = ""
) -> MCPServer:
    """An MCP server whose tools read and write the store through service.

    result_limit_chars is the largest tool result the harness shows whole when a tool
    declares it (`[claude_code] tool_result_limit_chars`): the index is paged at it. version
    is the package's, reported in `serverInfo`.
    """
    tools: list[Tool] = []

    role = Role.AGENT if service.identity.is_agent else Role.BUILDER
    page_limit = result_limit_chars
    # Claude Code shows a result whole up to the size a tool declares (its default is 50,000
    # characters); the index is declared, and paged, at the integration's limit.
    whole_results = {"anthropic/maxResultSizeChars": page_limit}

    @exact_tool(tools, annotations=ToolAnnotations(read_only_hint=True), meta=whole_results)
    @_errors_as_results
    async def lazy_memory_recall(
        name: Annotated[
            str | None,
            Field(description="The exact name of a record; leave it out to get the index."),
        ] = None,
        page: Annotated[
            int,
            Field(ge=1, description="Which page of the index, when it says it has more than one."),
        ] = 1,
    ) -> CallToolResult:
        """Read the project's shared memory: the whole index of records, or one record in full.

        Without a name: the memory section a launch gets, whole: one line per record,
        `- name (type): description` (or the compact's summary and the lines written since),
        in pages when it is very large (the last line names the next page). With a name: that
        record in full (name, type, description, revision, who last wrote it and when, and its
        markdown body). Read the index first, then recall the records whose descriptions bear
        on your task. An unknown name is an error; the index has the exact spelling.
        """
        # Models often fill an optional string with "" rather than leaving it out.
        if not name:
            section = (await service.context(role)).text
            shown, total = page_of(section, page_limit, RECALL_PAGE, page)
            if shown is None:
                raise InvalidRecord(f"there is no page {page}: the index has {total}")
            # Text only: a structured copy is what Claude Code would show, and it is larger.
            return CallToolResult(content=[TextContent(type="text", text=shown)])
        record = await service.recall(name)
        return _result(_record_text(record), record.model_dump(mode="json"))

    @exact_tool(tools)
    @_errors_as_results
    async def lazy_memory_save(
        name: Annotated[
            str,
            Field(
                description="1-200 printable characters, e.g. deploy-steps or Release "
                "checklist: spaces, capitals, any script and punctuation are fine; no control "
                "or format characters, no '/' or '\\', no leading dot, no whitespace at either "
                "end, no '(type):'. An existing name (exactly as the index spells it) is updated."
            ),
        ],
        type: Annotated[
            str,
            Field(
                description="user (who the user is, what they prefer), feedback (guidance on "
                "how to work), project (facts and decisions about this project) or reference "
                "(where to find things outside it)."
            ),
        ],
        description: Annotated[
            str,
            Field(description="One line of at most 200 characters: what the record tells."),
        ],
        body: Annotated[str, Field(description="The record's full content, in markdown.")],
        if_revision: Annotated[
            int | None,
            Field(
                ge=0,
                description="Save only if the record is still at this revision (the one "
                "lazy_memory_recall(name=...) showed; 0 for a name never written), else fail "
                "and change nothing. Leave it out to save whatever the record holds now.",
            ),
        ] = None,
    ) -> CallToolResult:
        """Save a record to the project's shared memory, creating it or replacing it whole.

        A record is a small named note that every later session sees in its memory index:
        how the project builds or deploys, what the user prefers, a decision and its reason.
        To change a record, recall it first and save every field; each save becomes a new
        revision and the old ones stay in the history. Returns the saved record. Agent
        sessions are read-only: put memory-worthy knowledge in your final summary instead.
        """
        record = await service.save(
            name, type=type, description=description, body=body, if_revision=if_revision
        )
        name = visible_line(record.name)
        if record.unchanged:
            text = f"unchanged, revision {record.revision}: {name} already held this content"
        else:
            text = f"saved {name} ({record.type.value}) as revision {record.revision}"
        return _result(text, record.model_dump(mode="json"))

    @exact_tool(tools, annotations=ToolAnnotations(read_only_hint=True), meta=whole_results)
    @_errors_as_results
    async def lazy_search(
        query: Annotated[
            str,
            Field(
                description='What to look for, e.g. in:memories deploy staging -"old way" '
                "type:project name:deploy*"
            ),
        ],
        page: Annotated[
            int, Field(ge=1, description="Which page of hits, when the last one says more match.")
        ] = 1,
    ) -> CallToolResult:
        """Search the project's shared memory records: names, descriptions and bodies.

        The query holds words (a record must hold all of them), "quoted phrases",
        type:user|feedback|project|reference, name:exact-name or name:prefix*, and -word or
        -"phrase" to leave records out; in:memories, the default scope, may lead it. Matching
        ignores case and punctuation, not word endings (deploy does not find deploys). Returns
        the best records first, 20 a page, each with its index line and a snippet with the
        matches between « and »; recall a record by name to read it in full.
        """
        hits, more = await service.search_page(query, page, SEARCH_PAGE)
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

    # WARNING: at INFO the SDK logs a line per request to stderr, which is the client's log.
    return MCPServer(
        "lazy-memory",
        instructions=_INSTRUCTIONS,
        version=version,
        log_level="WARNING",
        tools=tools,
    )


def _errors_as_results(
    tool: Callable[_P, Awaitable[CallToolResult]],
) -> Callable[_P, Awaitable[CallToolResult]]:
    """Wrap tool so that every exception becomes an error result the model can act on."""

    # functools.wraps keeps the signature the SDK builds the tool's input schema from.
    @functools.wraps(tool)
    async def answer(*args: _P.args, **kwargs: _P.kwargs) -> CallToolResult:
        try:
            return await tool(*args, **kwargs)
        except LazyMemoryError as error:
            return _error(visible_text(error.message))
        except Exception as error:
            logger.exception("%s failed", tool.__name__)
            return _error(
                f"lazy-memory failed with an internal error ({type(error).__name__}); the "
                "details are in the server's log"
            )

    # The SDK sends the docstring as the tool's description verbatim, indentation and all.
    answer.__doc__ = inspect.cleandoc(tool.__doc__ or "")
    return answer


def _record_text(record: Record) -> str:
    return (
        f"---\nname: {visible_line(record.name)}\ntype: {record.type.value}\n"
        f"description: {visible_line(record.description)}\nrevision: {record.revision}\n"
        f"updated_by: {visible_line(str(record.updated_by))}\n"
        f"updated_at: {record.updated_at.isoformat(timespec='seconds')}\n---\n\n"
        f"{visible_text(record.body)}"
    )


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    # Claude Code hands the model the structured content alone when there is any, so it
    # carries everything the text does, made visible as the text is.
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=_visible_json(structured),
    )


def _visible_json(value: Any, key: str = "") -> Any:
    """A JSON value with every string made visible: a body keeps its lines, the rest one each."""
    if isinstance(value, str):
        return visible_text(value) if key == "body" else visible_line(value)
    if isinstance(value, dict):
        return {field: _visible_json(item, field) for field, item in value.items()}
    if isinstance(value, list):
        return [_visible_json(item, key) for item in value]
    return value


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
