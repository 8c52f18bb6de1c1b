"""`lazy mcp`'s tool arguments as a model sends them, through the MCP SDK's own client.

A model that gets an argument wrong must read, in one sentence, which one and what it takes;
an argument the tool does not have, or a value of another JSON type, is refused rather than
guessed at. Saves can be compare-and-swap on the revision recall shows.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.e2e.mcp_sessions import Connect, history, text_of

GOOD = {"name": "deploy-steps", "type": "project", "description": "How we deploy", "body": "b"}


async def test_the_server_reports_the_package_version(
    connect: Connect,
) -> None:
    async with connect() as client:
        server_info = client.server_info
    assert server_info is not None
    assert server_info.name == "lazy-memory"
    assert server_info.version == version("lazy-memory")


async def test_schemas_refuse_other_arguments_and_save_offers_if_revision(
    connect: Connect,
) -> None:
    async with connect() as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert all(schema["additionalProperties"] is False for schema in tools.values())
    if_revision = tools["lazy_memory_save"]["properties"]["if_revision"]
    assert if_revision["anyOf"] == [{"type": "integer", "minimum": 0}, {"type": "null"}]
    assert "if_revision" not in tools["lazy_memory_save"]["required"]


async def test_a_missing_wrong_or_unknown_argument_is_one_sentence_naming_it(
    connect: Connect,
    project: Path,
) -> None:
    body_missing = {key: value for key, value in GOOD.items() if key != "body"}
    cases: list[tuple[str, dict[str, Any], str]] = [
        (
            "lazy_memory_save",
            body_missing,
            "lazy_memory_save: the argument body is missing: it takes a string.",
        ),
        (
            "lazy_memory_save",
            {**GOOD, "body": 5},
            "lazy_memory_save: the argument body takes a string, not 5.",
        ),
        (
            "lazy_memory_save",
            {**GOOD, "names": "deploy"},
            "lazy_memory_save: there is no argument names (the arguments are name, type, "
            "description, body, if_revision).",
        ),
        (
            "lazy_memory_save",
            {**GOOD, "if_revision": "1"},
            "lazy_memory_save: the argument if_revision takes an integer of at least 0 or null, "
            'not "1".',
        ),
        (
            "lazy_search",
            {"query": "deploy", "page": "2"},
            'lazy_search: the argument page takes an integer of at least 1, not "2".',
        ),
        (
            "lazy_search",
            {"query": "deploy", "page": True},
            "lazy_search: the argument page takes an integer of at least 1, not true.",
        ),
        (
            "lazy_memory_recall",
            {"name": "deploy-steps", "verbose": "yes"},
            "lazy_memory_recall: there is no argument verbose (the arguments are name, page).",
        ),
        (
            "lazy_memory_recall",
            {"name": ["deploy-steps"]},
            'lazy_memory_recall: the argument name takes a string or null, not ["deploy-steps"].',
        ),
    ]
    async with connect() as client:
        for tool, arguments, sentence in cases:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, arguments
            assert text_of(result) == sentence
    assert await history(project) == [], "a refused save wrote nothing"


async def test_several_wrong_arguments_are_named_in_the_one_sentence(
    connect: Connect,
) -> None:
    async with connect() as client:
        result = await client.call_tool("lazy_memory_save", {"name": "n", "type": 3})
    assert result.is_error
    assert text_of(result) == (
        "lazy_memory_save: the argument type takes a string, not 3; the argument description "
        "is missing: it takes a string; the argument body is missing: it takes a string."
    )


async def test_a_name_that_looks_like_json_is_taken_as_the_text_it_is(
    connect: Connect,
) -> None:
    async with connect() as client:
        saved = await client.call_tool("lazy_memory_save", {**GOOD, "name": "[1]"})
        recalled = await client.call_tool("lazy_memory_recall", {"name": "[1]"})
    assert not saved.is_error, text_of(saved)
    assert not recalled.is_error, text_of(recalled)
    assert recalled.structured_content is not None
    assert recalled.structured_content["name"] == "[1]"


async def test_save_with_if_revision_is_a_compare_and_swap_on_what_recall_shows(
    connect: Connect,
    project: Path,
) -> None:
    async with connect(LAZY_ACTOR="builder-7") as client:
        created = await client.call_tool("lazy_memory_save", {**GOOD, "if_revision": 0})
        assert not created.is_error, text_of(created)
        recalled = await client.call_tool("lazy_memory_recall", {"name": "deploy-steps"})
        assert "\nrevision: 1\n" in text_of(recalled)
        assert recalled.structured_content is not None
        revision = recalled.structured_content["revision"]

        updated = await client.call_tool(
            "lazy_memory_save", {**GOOD, "body": "second", "if_revision": revision}
        )
        assert not updated.is_error, text_of(updated)
        assert updated.structured_content is not None
        assert updated.structured_content["revision"] == 2

        stale = await client.call_tool(
            "lazy_memory_save", {**GOOD, "body": "third", "if_revision": revision}
        )
        again = await client.call_tool("lazy_memory_save", {**GOOD, "if_revision": 0})
    assert stale.is_error
    assert "revision 2" in text_of(stale)
    assert again.is_error
    assert [entry["revision"] for entry in await history(project)] == [1, 2]
