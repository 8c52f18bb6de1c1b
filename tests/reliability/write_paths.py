"""Every way into the store, each with the arguments that would make it write.

The boundary tests call all of them as an agent and check that nothing changed; the lists are
checked against what the code really offers (the method tables, the commands the engine
advertises, the CLI's parser, the MCP server's tools), so a new way in that is not listed here
fails those tests until it is, and once listed it is called like every other.
"""

from __future__ import annotations

import argparse
from typing import Any

from lazy_memory.engine.compaction import COMPACT_PREAMBLE

SEEDED = [f"seed-{number}" for number in range(12)]
"""The records a boundary test's store starts with."""

SEED_DESCRIPTION = "A seeded record whose description is long enough for a compact to help "
AT = "2026-11-30T12:00:00Z"
ACTOR = {"kind": "human", "detail": "intruder"}
PLANTED = {"name": "planted", "type": "project", "description": "planted", "body": "planted"}
COMPACT = {
    "preamble": COMPACT_PREAMBLE,
    "summary": "planted summary",
    "generator": "mechanical",
    "generated_at": AT,
    "generated_by": ACTOR,
    "watermark": {},
}

WRITES: dict[str, list[Any]] = {
    "lazy/memory/save": [
        PLANTED,
        {"name": "seed-0", "type": "user", "description": "x", "body": ""},
    ],
    "lazy/memory/rm": [{"name": "seed-1"}],
    "lazy/memory/import": [{"apply": True}],
    "lazy/memory/compact": [{"mode": "mechanical"}, {"clear": True}],
    "lazy/storage/save_record": [{"content": PLANTED, "actor": ACTOR, "at": AT}],
    "lazy/storage/remove_record": [{"name": "seed-2", "actor": ACTOR, "at": AT}],
    "lazy/storage/put_compact": [{"compact": COMPACT}],
    "lazy/storage/clear_compact": [{}],
}
"""Methods that write, each with params that write for a session that may."""

READS: dict[str, list[Any]] = {
    "lazy/memory/recall": [{}, {"name": "seed-0"}],
    "lazy/memory/history": [{}, {"name": "seed-0"}],
    "lazy/memory/document": [{"uri": "lazy-memory:seed-0"}],
    "lazy/memory/context": [{"role": "builder"}, {"role": "agent"}],
    "lazy/doctor": [{}],
    "lazy/search": [{"query": "seeded"}],
    "lazy/storage/list_records": [{}],
    "lazy/storage/list_index": [{}],
    "lazy/storage/change_marker": [{}],
    "lazy/storage/get_record": [{"name": "seed-0"}],
    "lazy/storage/history": [{}],
    "lazy/storage/live_revisions": [{}],
    "lazy/storage/removed_since": [{"watermark": {"seed-0": 1}}],
    "lazy/storage/search": [{"query": {"words": ["seeded"]}, "limit": 5}],
    "lazy/storage/get_compact": [{}],
}
"""Methods that only read, with plausible params: an agent may call them, nothing changes."""

COMMAND_WRITES: dict[str, list[list[Any]]] = {
    "lazy-memory.save": [[PLANTED]],
    "lazy-memory.rm": [[{"name": "seed-3"}]],
    "lazy-memory.compact": [[{"mode": "mechanical"}], [{"clear": True}]],
}
"""`workspace/executeCommand` commands that write, with their arguments."""

COMMAND_READS: dict[str, list[list[Any]]] = {
    "lazy-memory.doctor": [[{}], []],
    "lazy-memory.show": [[{"uri": "lazy-memory:seed-0"}]],
}
"""Commands that only read."""


def method_calls() -> list[tuple[str, Any]]:
    """Every (method, params) to try, the writes first."""
    return [
        (method, params)
        for table in (WRITES, READS)
        for method in table
        for params in table[method]
    ]


CLI_WRITES: dict[tuple[str, ...], list[list[str]]] = {
    ("memory", "save"): [
        ["memory", "save", "planted", "-t", "project", "-d", "planted", "--body", "b"],
        ["memory", "save", "seed-0", "-d", "changed"],
    ],
    ("memory", "rm"): [["memory", "rm", "seed-1"]],
    ("memory", "compact"): [
        ["memory", "compact", "--mechanical"],
        ["memory", "compact", "--clear"],
    ],
    ("memory", "migrate"): [["memory", "migrate", "--to", "files", "--to-data", "{target}"]],
    ("doctor",): [["doctor", "--import-memory", "--yes"]],
}
"""CLI commands that write (or offer to), each with arguments that would.

`{target}` is replaced with a folder outside the store, for `migrate` to copy into.
"""

CLI_READS: dict[tuple[str, ...], list[list[str]]] = {
    ("memory", "list"): [["memory", "list"]],
    ("memory", "show"): [["memory", "show", "seed-0"]],
    ("memory", "history"): [["memory", "history"]],
    ("memory", "context"): [["memory", "context", "--role", "agent"]],
    ("search",): [["search", "seeded"]],
    ("doctor",): [["doctor"]],
}
"""CLI commands that only read."""

CLI_REFUSED: dict[tuple[str, ...], list[list[str]]] = {("init",): [["init", "--non-interactive"]]}
"""CLI commands an agent is refused that write no record themselves (init offers the import)."""

CLI_ELSEWHERE = {
    ("engine",): "the engine's methods are called one by one over JSON-RPC",
    ("mcp",): "the MCP tools are called one by one over MCP",
    ("engine", "token", "add"): "tokens.json, not the store; a token's role gates its writes",
    ("engine", "token", "list"): "reads tokens.json",
    ("engine", "token", "revoke"): "tokens.json, not the store",
}
"""CLI commands tested through another door, and why."""

MCP_WRITES: dict[str, list[dict[str, Any]]] = {"lazy_memory_save": [PLANTED]}
MCP_READS: dict[str, list[dict[str, Any]]] = {
    "lazy_memory_recall": [{}, {"name": "seed-0"}],
    "lazy_search": [{"query": "seeded"}],
}


def cli_commands(parser: argparse.ArgumentParser) -> set[tuple[str, ...]]:
    """Every command the parser runs, as the words that name it (`memory save`, `engine`)."""
    found: set[tuple[str, ...]] = set()

    def walk(node: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        groups = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
        if not groups:
            found.add(path)
        for group in groups:
            for name, child in group.choices.items():
                walk(child, (*path, name))
            if not group.required:
                found.add(path)

    walk(parser, ())
    return found
