"""What `lazy mcp` tells a harness before it has read anything: its tools, as JSON.

The harness asks for the tools at start-up, and Claude Code sends its first model request
without waiting for a slow server: so the answer to `tools/list` is data written here, not
built from function signatures by a framework that takes a second to import. Each tool's name,
description, input schema (a JSON Schema the arguments are checked against, rpc/mcp/arguments.py),
annotations and `_meta` are as the model reads them; rpc/mcp/tools.py implements them. Only the
standard library is imported: this module is on the start path.
"""

from __future__ import annotations

from typing import Any

SERVER_NAME = "lazy-memory"
INSTRUCTIONS = (
    "The shared memory of this project's coding agents: small named records that outlive "
    "sessions. Read the index with lazy_memory_recall(), a record in full with "
    'lazy_memory_recall(name=...), and search them with lazy_search(query="in:memories ...").'
)
RESULT_LIMIT_META = "anthropic/maxResultSizeChars"
"""The `_meta` key by which a tool tells Claude Code how large a result it shows whole."""

RECALL = "lazy_memory_recall"
SAVE = "lazy_memory_save"
SEARCH = "lazy_search"

_RECALL_DESCRIPTION = """\
Read the project's shared memory: the whole index of records, or one record in full.

Without a name: the memory section a launch gets, whole: one line per record,
`- name (type): description` (or the compact's summary and the lines written since),
in pages when it is very large (the last line names the next page). With a name: that
record in full (name, type, description, revision, who last wrote it and when, and its
markdown body). Read the index first, then recall the records whose descriptions bear
on your task. An unknown name is an error; the index has the exact spelling."""

_SAVE_DESCRIPTION = """\
Save a record to the project's shared memory, creating it or replacing it whole.

A record is a small named note that every later session sees in its memory index:
how the project builds or deploys, what the user prefers, a decision and its reason.
To change a record, recall it first and save every field; each save becomes a new
revision and the old ones stay in the history. Returns the saved record. Agent
sessions are read-only: put memory-worthy knowledge in your final summary instead."""

_SEARCH_DESCRIPTION = """\
Search the project's shared memory records: names, descriptions and bodies.

The query holds words (a record must hold all of them), "quoted phrases",
type:user|feedback|project|reference, name:exact-name or name:prefix*, and -word or
-"phrase" to leave records out; in:memories, the default scope, may lead it. Matching
ignores case and punctuation, not word endings (deploy does not find deploys). Returns
the best records first, 20 a page, each with its index line and a snippet with the
matches between « and »; recall a record by name to read it in full."""


def _string(title: str, description: str) -> dict[str, Any]:
    return {"description": description, "title": title, "type": "string"}


def _page(description: str) -> dict[str, Any]:
    return {
        "default": 1,
        "description": description,
        "minimum": 1,
        "title": "Page",
        "type": "integer",
    }


def _arguments(
    tool: str, properties: dict[str, Any], required: list[str] | None = None
) -> dict[str, Any]:
    """An input schema: these properties and no others."""
    schema: dict[str, Any] = {"properties": properties}
    if required:
        schema["required"] = required
    return {
        **schema,
        "type": "object",
        "additionalProperties": False,
        "title": f"{tool}Arguments",
    }


INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: _arguments(
        RECALL,
        {
            "name": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "The exact name of a record; leave it out to get the index.",
                "title": "Name",
            },
            "page": _page("Which page of the index, when it says it has more than one."),
        },
    ),
    SAVE: _arguments(
        SAVE,
        {
            "name": _string(
                "Name",
                "1-200 printable characters, e.g. deploy-steps or Release checklist: spaces, "
                "capitals, any script and punctuation are fine; no control or format "
                "characters, no '/' or '\\', no leading dot, no whitespace at either end, no "
                "'(type):'. An existing name (exactly as the index spells it) is updated.",
            ),
            "type": _string(
                "Type",
                "user (who the user is, what they prefer), feedback (guidance on how to work), "
                "project (facts and decisions about this project) or reference (where to find "
                "things outside it).",
            ),
            "description": _string(
                "Description", "One line of at most 200 characters: what the record tells."
            ),
            "body": _string("Body", "The record's full content, in markdown."),
            "if_revision": {
                "anyOf": [{"minimum": 0, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "Save only if the record is still at this revision (the one "
                "lazy_memory_recall(name=...) showed; 0 for a name never written), else fail "
                "and change nothing. Leave it out to save whatever the record holds now.",
                "title": "If Revision",
            },
        },
        required=["name", "type", "description", "body"],
    ),
    SEARCH: _arguments(
        SEARCH,
        {
            "query": _string(
                "Query",
                'What to look for, e.g. in:memories deploy staging -"old way" type:project '
                "name:deploy*",
            ),
            "page": _page("Which page of hits, when the last one says more match."),
        },
        required=["query"],
    ),
}
"""Each tool's arguments, as its `inputSchema` declares them and as they are checked."""


def tool_list(result_limit_chars: int) -> list[dict[str, Any]]:
    """The tools, as `tools/list` answers: the readers declare results up to result_limit_chars
    (`[claude_code] tool_result_limit_chars`), so Claude Code shows them whole up to that size
    instead of its default 50,000 characters."""
    reader = {
        "annotations": {"readOnlyHint": True},
        "_meta": {RESULT_LIMIT_META: result_limit_chars},
    }
    return [
        {
            "name": RECALL,
            "description": _RECALL_DESCRIPTION,
            "inputSchema": INPUT_SCHEMAS[RECALL],
            **reader,
        },
        {"name": SAVE, "description": _SAVE_DESCRIPTION, "inputSchema": INPUT_SCHEMAS[SAVE]},
        {
            "name": SEARCH,
            "description": _SEARCH_DESCRIPTION,
            "inputSchema": INPUT_SCHEMAS[SEARCH],
            **reader,
        },
    ]
