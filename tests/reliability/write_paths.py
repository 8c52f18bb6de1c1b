"""Every way into the store, each with the arguments that would make it write.

tests/reliability/test_agent_write_paths.py calls all of them as an agent and checks that not
a byte changed; the lists are checked against what the code really offers (the method tables,
the editor's commands and what the engine advertises, the CLI's parser, the MCP server's
tools), so a new way in that is not listed here fails those tests until it is, and once listed
it is called like every other.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from lazy_memory.engine.context import COMPACT_PREAMBLES, MEASURED_ROLE
from tests.support.jsonrpc import RawClient

if TYPE_CHECKING:
    from tests.support.daemon import Daemon

SEEDED = [f"seed-{number}" for number in range(12)]
"""The records a boundary test's store starts with."""

SEED_DESCRIPTION = "A seeded record whose description is long enough for a compact to help "
AT = "2026-11-30T12:00:00Z"
ACTOR = {"kind": "human", "detail": "intruder"}
PLANTED = {"name": "planted", "type": "project", "description": "planted", "body": "planted"}
COMPACT = {
    "preamble": COMPACT_PREAMBLES[MEASURED_ROLE],
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
    "lazy/storage/spellings": [{"name": "seed-0"}],
    "lazy/storage/live_revisions": [{}],
    "lazy/storage/removed_since": [{"watermark": {"seed-0": 1}}],
    "lazy/storage/search": [{"query": {"words": ["seeded"]}, "limit": 5}],
    "lazy/storage/unreadable_records": [{}],
    "lazy/storage/get_compact": [{}],
}
"""Methods that only read, with plausible params: an agent may call them, nothing changes."""

COMMAND_WRITES: dict[str, list[list[Any]]] = {
    # Not PLANTED: lazy/memory/save wrote that already, and a save that changes nothing
    # writes nothing.
    "lazy-memory.save": [[{**PLANTED, "body": "planted from an editor"}]],
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


def every_call() -> list[tuple[str, Any]]:
    """Every method and command with its arguments, the writes first."""
    commands = [
        (command, arguments)
        for table in (COMMAND_WRITES, COMMAND_READS)
        for command, calls in table.items()
        for arguments in calls
    ]
    return [*method_calls(), *commands]


def writes(method: str) -> bool:
    """Whether the method or command is one that writes."""
    return method in WRITES or method in COMMAND_WRITES


PERMISSION_DENIED = -32013


def error_code(answer: dict[str, Any]) -> int | None:
    """The error code of a response, None for a result."""
    return answer["error"]["code"] if "error" in answer else None


def advertised(initialized: dict[str, Any]) -> set[str]:
    """The commands the engine says it runs, from its initialize result."""
    provider = initialized["result"]["capabilities"].get("executeCommandProvider") or {}
    return set(provider.get("commands", []))


async def call(client: RawClient, method: str, params: Any) -> dict[str, Any]:
    """One request; for a command (`lazy-memory.*`), workspace/executeCommand with params."""
    if method.startswith("lazy-memory."):
        return await client.request(
            "workspace/executeCommand", {"command": method, "arguments": params}
        )
    return await client.request(method, params)


async def connect(daemon: Daemon) -> RawClient:
    """A raw client on a new connection to a unix-socket daemon."""
    reader, writer = await asyncio.open_unix_connection(daemon.address.removeprefix("unix:"))
    return RawClient(reader, writer)


CLI_WRITES: dict[tuple[str, ...], list[list[str]]] = {
    ("memory", "save"): [
        ["memory", "save", "planted", "-t", "project", "-d", "planted", "--body", "b"],
        ["memory", "save", "seed-0", "-d", "changed"],
        ["memory", "save", "seed-5", "--body", "new", "--if-revision", "1"],
    ],
    ("memory", "rm"): [["memory", "rm", "seed-1"]],
    ("memory", "compact"): [
        ["memory", "compact", "--mechanical"],
        ["memory", "compact", "--clear"],
    ],
    ("memory", "migrate"): [["memory", "migrate", "--to", "files", "--to-data", "{target}"]],
    ("doctor",): [["doctor", "--import-memory", "--yes"]],
    ("init",): [
        ["init", "--non-interactive"],
        ["init", "--claude-code", "--yes"],
        ["init", "--claude-code", "--remove"],
    ],
    ("engine", "token", "add"): [
        ["engine", "token", "add", "--role", "builder"],
        ["engine", "token", "add", "--role", "agent", "--task", "t-9"],
    ],
    ("engine", "token", "revoke"): [["engine", "token", "revoke", "{token}"]],
}
"""CLI commands that write, each with arguments that do write for a person, run in this order.

The placeholders are filled in by cli_argv: `{target}` a folder outside the store for
`migrate` to copy into, `{token}` the id of a token the store has.
"""

CLI_REFUSED: dict[tuple[str, ...], list[list[str]]] = {
    ("memory", "compact"): [["memory", "compact"], ["memory", "compact", "--llm"]],
    ("memory", "migrate"): [
        ["memory", "migrate", "--to", "files", "--to-data", "{target}", "--dry-run"]
    ],
    ("doctor",): [["doctor", "--import-memory"]],
    ("engine",): [["engine", "--listen", "unix:{socket}"]],
}
"""Commands an agent is refused though, run by a person, they would write nothing here.

A preview, a dry run, a second compact no smaller than the first (auto is offline here), a
daemon (which serves until stopped; `{socket}` is a unix socket's path).
"""

CLI_READS: dict[tuple[str, ...], list[list[str]]] = {
    ("memory", "list"): [["memory", "list"]],
    ("memory", "show"): [["memory", "show", "seed-0"]],
    ("memory", "history"): [["memory", "history"]],
    ("memory", "context"): [
        ["memory", "context", "--role", "agent"],
        ["memory", "context", "--hook"],
    ],
    ("memory", "compact"): [["memory", "compact", "--show"]],
    ("search",): [["search", "seeded"]],
    ("doctor",): [["doctor"]],
    ("engine", "token", "list"): [["engine", "token", "list"]],
    ("launch",): [["launch", "claude", "--task-id", "t-2", "--claude", "{true}"]],
}
"""CLI commands that only read (`{true}` is a program that exits 0, standing in for claude)."""

CLI_ELSEWHERE = {
    ("engine",): "the engine's methods are called one by one over JSON-RPC",
    ("mcp",): "the MCP tools are called one by one over MCP",
    ("web",): "it serves until stopped; tests/unit/test_web_app.py checks it has no write "
    "endpoint and that its service refuses writes",
}
"""CLI commands tested through another door, and why."""


def cli_argv(arguments: list[str], values: dict[str, str]) -> list[str]:
    """arguments with each `{name}` placeholder replaced by values[name]."""
    filled = []
    for argument in arguments:
        for name, value in values.items():
            argument = argument.replace("{" + name + "}", value)
        filled.append(argument)
    return filled


MCP_WRITES: dict[str, list[dict[str, Any]]] = {"lazy_memory_save": [PLANTED]}
MCP_READS: dict[str, list[dict[str, Any]]] = {
    "lazy_memory_recall": [{}, {"name": "seed-0"}],
    "lazy_search": [{"query": "seeded"}],
}


def cli_commands(parser: argparse.ArgumentParser) -> set[tuple[str, ...]]:
    """Every command the parser runs, as the words that name it (`memory save`, `engine`)."""
    found: set[tuple[str, ...]] = set()

    def walk(node: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        # A command group given no command runs nothing: it prints its help.
        if node.get_default("run") is not None:
            found.add(path)
        for group in node._actions:
            if isinstance(group, argparse._SubParsersAction):
                for name, child in group.choices.items():
                    walk(child, (*path, name))

    walk(parser, ())
    return found
