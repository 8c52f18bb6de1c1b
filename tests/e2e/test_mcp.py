"""`lazy mcp` as an agent harness drives it: the real process, spoken to by the MCP SDK's client."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lazy_memory.adapters import open_service
from lazy_memory.adapters.config import load_settings
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.rpc.mcp.tools import McpTools
from tests.e2e.mcp_sessions import LAZY, TIMEOUT, Connect, history, text_of


async def test_tools_list_shows_the_three_tools_with_input_schemas(connect: Connect) -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == {"lazy_memory_recall", "lazy_memory_save", "lazy_search"}
    recall = tools["lazy_memory_recall"].input_schema
    assert set(recall["properties"]) == {"name", "page"}
    assert "required" not in recall
    # The index is declared big enough to reach the model whole (Claude Code's default is 50K).
    for name in ("lazy_memory_recall", "lazy_search"):
        assert tools[name].meta == {"anthropic/maxResultSizeChars": 500_000}
    save = tools["lazy_memory_save"].input_schema
    assert save["required"] == ["name", "type", "description", "body"]
    assert all(save["properties"][field]["type"] == "string" for field in save["required"])
    assert tools["lazy_search"].input_schema["required"] == ["query"]
    for tool in tools.values():
        assert tool.description
        assert not tool.description.startswith(" ")
    save_description = tools["lazy_memory_save"].description or ""
    assert "read-only" in save_description
    assert "final summary" in save_description


async def test_save_then_recall_the_index_and_one_record(connect: Connect) -> None:
    async with connect(LAZY_ACTOR="builder-7") as client:
        empty = await client.call_tool("lazy_memory_recall", {})
        assert not empty.is_error
        # The launch's own section, as text only: a structured copy would be what the
        # model is shown, and larger.
        assert empty.structured_content is None
        assert text_of(empty).endswith("No memory records have been saved for this project yet.\n")

        saved = await client.call_tool(
            "lazy_memory_save",
            {
                "name": "deploy-steps",
                "type": "project",
                "description": "How we deploy",
                "body": "Run `make deploy`.",
            },
        )
        assert not saved.is_error, text_of(saved)
        assert text_of(saved) == "saved deploy-steps (project) as revision 1"
        assert saved.structured_content is not None
        assert saved.structured_content["revision"] == 1
        await client.call_tool(
            "lazy_memory_save",
            {"name": "deploy-steps", "type": "project", "description": "How we ship", "body": "b"},
        )
        await client.call_tool(
            "lazy_memory_save",
            {"name": "style", "type": "feedback", "description": "Small modules", "body": "..."},
        )

        index = await client.call_tool("lazy_memory_recall", {})
        assert not index.is_error
        assert text_of(index).startswith("# Project memory\n")
        assert [line for line in text_of(index).splitlines() if line.startswith("- ")] == [
            "- deploy-steps (project): How we ship",
            "- style (feedback): Small modules",
        ]
        assert index.structured_content is None

        one = await client.call_tool("lazy_memory_recall", {"name": "style"})
    assert not one.is_error
    record = one.structured_content
    assert record is not None
    assert set(record) == {
        "name",
        "type",
        "description",
        "revision",
        "provenance",
        "updated_by",
        "updated_at",
        "body",
    }
    assert {k: record[k] for k in ("name", "type", "description", "revision", "body")} == {
        "name": "style",
        "type": "feedback",
        "description": "Small modules",
        "revision": 1,
        "body": "...",
    }
    assert record["updated_by"] == {"kind": "builder", "detail": "builder-7"}
    assert text_of(one).startswith("---\nname: style\ntype: feedback\n")
    assert "updated_by: builder:builder-7\n" in text_of(one)
    assert text_of(one).endswith("\n---\n\n...")


async def test_bad_saves_are_error_results_and_write_nothing(
    connect: Connect, project: Path
) -> None:
    good = {"name": "good-name", "type": "project", "description": "d", "body": "b"}
    cases = [
        ({"name": "Bad/Name"}, "invalid name 'Bad/Name'"),
        ({"description": "x" * 201}, "the description is 201 characters; the limit is 200"),
        ({"type": "opinion"}, "unknown type 'opinion': use one of user, feedback"),
    ]
    async with connect() as client:
        for change, message in cases:
            result = await client.call_tool("lazy_memory_save", {**good, **change})
            assert result.is_error, change
            assert message in text_of(result)
            assert result.structured_content is None
        index = await client.call_tool("lazy_memory_recall", {})
    assert "No memory records have been saved" in text_of(index)
    assert await history(project) == []


async def test_an_agent_cannot_save_and_is_told_where_knowledge_goes(
    connect: Connect, project: Path
) -> None:
    async with connect(LAZY_TASK_ID="task-1") as client:
        refused = await client.call_tool(
            "lazy_memory_save",
            {"name": "learned", "type": "project", "description": "d", "body": "b"},
        )
        assert refused.is_error
        assert "read-only" in text_of(refused)
        assert "final summary" in text_of(refused)
        reading = await client.call_tool("lazy_memory_recall", {})
        assert not reading.is_error, "agents read freely"
    assert await history(project) == []


async def test_recall_of_an_unknown_name_is_an_error_result(connect: Connect) -> None:
    async with connect() as client:
        result = await client.call_tool("lazy_memory_recall", {"name": "no-such-record"})
    assert result.is_error
    assert "no-such-record" in text_of(result)


async def test_search_answers_with_the_hits_as_lines_and_structured_content(
    connect: Connect,
) -> None:
    async with connect(LAZY_ACTOR="builder-7") as client:
        for name, description, body in (
            ("deploy-steps", "How we deploy", "First run the tests.\nThen make deploy."),
            ("credentials", "Where the credentials live", "In vault, under deploy/."),
        ):
            saved = await client.call_tool(
                "lazy_memory_save",
                {"name": name, "type": "project", "description": description, "body": body},
            )
            assert not saved.is_error, text_of(saved)

        found = await client.call_tool("lazy_search", {"query": 'in:memories "make deploy"'})
        several = await client.call_tool("lazy_search", {"query": "deploy"})
        nothing = await client.call_tool("lazy_search", {"query": "giraffe"})

    assert not found.is_error, text_of(found)
    assert text_of(found) == (
        "- deploy-steps (project): How we deploy\n  First run the tests. Then «make deploy»."
    )
    assert found.structured_content is not None
    [hit] = found.structured_content["hits"]
    assert {k: hit[k] for k in ("name", "type", "description", "snippet")} == {
        "name": "deploy-steps",
        "type": "project",
        "description": "How we deploy",
        "snippet": "First run the tests. Then «make deploy».",
    }
    assert hit["score"] > 0
    assert several.structured_content is not None
    assert [h["name"] for h in several.structured_content["hits"]] == [
        "deploy-steps",
        "credentials",
    ]
    assert not nothing.is_error
    assert text_of(nothing) == "No memory record matches giraffe"
    assert nothing.structured_content == {"hits": [], "page": 1, "more": False}


async def test_a_bad_search_query_is_an_error_result_pointing_at_the_problem(
    connect: Connect,
) -> None:
    async with connect(LAZY_TASK_ID="task-1") as client:
        result = await client.call_tool("lazy_search", {"query": 'deploy "make deploy'})
        scope = await client.call_tool("lazy_search", {"query": "in:notes deploy"})
    assert result.is_error
    assert "column 8" in text_of(result)
    assert "never closed" in text_of(result)
    assert scope.is_error
    assert "the scopes there are: memories" in text_of(scope)


async def test_writes_are_attributed_to_the_builder_named_by_lazy_actor(
    connect: Connect, project: Path
) -> None:
    async with connect(LAZY_ACTOR="builder-7") as client:
        saved = await client.call_tool(
            "lazy_memory_save", {"name": "n", "type": "user", "description": "d", "body": "b"}
        )
        assert not saved.is_error, text_of(saved)
    [entry] = await history(project)
    assert entry["actor"] == {"kind": "builder", "detail": "builder-7"}
    assert (entry["name"], entry["revision"], entry["operation"]) == ("n", 1, "save")


def test_the_server_exits_cleanly_when_the_client_goes_away(project: Path) -> None:
    done = subprocess.run(
        [*LAZY, "mcp"], cwd=project, input="", capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_the_record_commands_do_not_import_the_mcp_sdk(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *LAZY[1:], "memory", "list"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "lazy_memory.rpc.cli.mcp" in imported, "the `lazy mcp` command is registered"
    sdk = sorted(m for m in imported if m in ("mcp", "mcp_types") or m.startswith("mcp."))
    assert sdk == []


async def test_an_unexpected_failure_is_an_error_result_logged_to_stderr(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    identity = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="b"))
    service = await open_service(load_settings(), identity)

    async def broken(name: str) -> object:
        raise RuntimeError("the disk is on fire")

    service.recall = broken  # type: ignore[method-assign,assignment]
    try:
        with caplog.at_level(logging.ERROR):
            result = await McpTools(service, 500_000).call("lazy_memory_recall", {"name": "x"})
    finally:
        await service.aclose()

    assert result["isError"] is True
    [block] = result["content"]
    assert "internal error (RuntimeError)" in block["text"]
    [logged] = [r for r in caplog.records if r.name == "lazy_memory.rpc.mcp.tools"]
    assert logged.exc_info is not None
    assert "the disk is on fire" in str(logged.exc_info[1])
    assert capsys.readouterr().out == ""


STRAY_OUTPUT = '''
import importlib.abc
import os
import sys


class PrintWhenImported(importlib.abc.MetaPathFinder):
    """Write to stdout, as a careless library might, when `lazy mcp` imports these modules:
    one on its start path, one as it opens the tools (in a thread of its own)."""

    def __init__(self):
        self.modules = {"lazy_memory.rpc.mcp.protocol", "pydantic"}

    def find_spec(self, name, path=None, target=None):
        if name in self.modules:
            self.modules.discard(name)
            print(f"a stray print while {name} is imported")
            os.write(1, f"a stray write to fd 1 while {name} is imported\\n".encode())
        return None


sys.meta_path.insert(0, PrintWhenImported())
'''
"""A sitecustomize for `lazy mcp` (only): stray output to stdout during its start-up."""


async def test_stray_output_during_start_up_does_not_reach_the_protocol(
    connect: Connect, tmp_path: Path
) -> None:
    injected = tmp_path / "injected"
    injected.mkdir()
    (injected / "sitecustomize.py").write_text(STRAY_OUTPUT)
    python_path = os.pathsep.join(filter(None, [str(injected), os.environ.get("PYTHONPATH")]))

    async with connect(PYTHONPATH=python_path) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        saved = await client.call_tool(
            "lazy_memory_save",
            {"name": "n", "type": "project", "description": "d", "body": "b"},
        )
        recalled = await client.call_tool("lazy_memory_recall", {"name": "n"})

    assert tools == {"lazy_memory_recall", "lazy_memory_save", "lazy_search"}
    assert not saved.is_error, text_of(saved)
    assert "revision: 1" in text_of(recalled)
    # The output was written, and went to the client's log, not into the protocol.
    log = (tmp_path / "server-stderr.log").read_text()
    for module in ("lazy_memory.rpc.mcp.protocol", "pydantic"):
        assert f"a stray print while {module} is imported" in log
        assert f"a stray write to fd 1 while {module} is imported" in log
