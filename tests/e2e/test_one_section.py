"""One renderer: hook, `lazy memory context`, the engine and MCP recall give the same section.

Byte for byte, for both roles, for a store with records and for one that cannot be read; and
the engine's methods page what is too large for one answer.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mcp.types import TextContent

from tests.e2e.conftest import Lazy
from tests.e2e.jsonrpc import RawClient
from tests.e2e.test_mcp import Connect, connect  # noqa: F401  (the fixture)


async def engine_section(tmp_path: Path, project: Path, role: str, **environment: str) -> str:
    engine = await RawClient.spawn(
        ["engine"], {**os.environ, **environment}, tmp_path / f"engine-{role}.log", project
    )
    try:
        await engine.initialize()
        context = await engine.result("lazy/memory/context", {"role": role})
    finally:
        await engine.close()
    return str(context["text"])


async def mcp_section(connect: Connect, **environment: str) -> str:  # noqa: F811
    async with connect(**environment) as client:
        result = await client.call_tool("lazy_memory_recall", {})
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def break_store(data_dir: Path) -> None:
    for path in data_dir.glob("memory.db*"):
        path.unlink()
    (data_dir / "memory.db").write_bytes(b"garbage " * 1000)


def index_names(text: str) -> set[str]:
    return {line[2:].split(" (")[0] for line in text.splitlines() if line.startswith("- ")}


def hook(lazy: Lazy, **environment: str) -> subprocess.CompletedProcess[str]:
    return lazy("memory", "context", "--hook", environment=environment)


@pytest.mark.parametrize("broken", [False, True], ids=["records", "unreadable"])
async def test_every_way_in_gives_the_same_section_for_each_role(
    lazy: Lazy,
    connect: Connect,  # noqa: F811
    tmp_path: Path,
    project: Path,
    isolated_environment: Path,
    broken: bool,
) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 100\n", encoding="utf-8")
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    lazy("memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "b")
    if broken:
        break_store(isolated_environment)
    agent = {"LAZY_TASK_ID": "t-1"}

    builder_sections = {
        "hook": hook(lazy).stdout,
        "context": lazy("memory", "context", "--role", "builder").stdout,
        "engine": await engine_section(tmp_path, project, "builder"),
        "mcp": await mcp_section(connect),
    }
    agent_sections = {
        "hook": hook(lazy, **agent).stdout,
        "context": lazy("memory", "context", "--role", "agent").stdout,
        "engine": await engine_section(tmp_path, project, "agent", **agent),
        "mcp": await mcp_section(connect, **agent),
    }

    assert len(set(builder_sections.values())) == 1, builder_sections
    assert len(set(agent_sections.values())) == 1, agent_sections
    builder, agent_text = builder_sections["hook"], agent_sections["hook"]
    if broken:
        assert builder.startswith("MEMORY INDEX UNAVAILABLE (")
    else:
        assert "- deploy (project): How we deploy" in builder
        assert "lazy doctor" in builder
        assert "lazy doctor" not in agent_text


async def test_the_engine_pages_the_section_the_index_and_search(
    lazy: Lazy, tmp_path: Path, project: Path
) -> None:
    for number in range(30):
        lazy(
            "memory", "save", f"note-{number:02d}", "-t", "project", "-d",
            f"deploy note {number} " + "x" * 60, "--body", "deploy",
        )  # fmt: skip
    whole = lazy("memory", "context", "--role", "agent").stdout
    engine = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log")

    async def page(number: int) -> dict[str, object]:
        params = {"role": "agent", "page": number, "page_chars": 1000}
        return dict(await engine.request("lazy/memory/context", params))

    try:
        await engine.initialize()
        first = (await page(1))["result"]
        pages = [first] + [(await page(n))["result"] for n in range(2, first["pages"] + 1)]
        beyond = await page(first["pages"] + 1)
        index = await engine.result("lazy/memory/recall", {"page": 2, "page_size": 10})
        unpaged = await engine.result("lazy/memory/context", {"role": "agent"})
        hits = await engine.result("lazy/search", {"query": "deploy", "limit": 25, "page": 2})
    finally:
        await engine.close()

    assert first["pages"] > 1
    assert all(len(text["text"]) <= 1000 for text in pages)
    assert 'lazy/memory/context {"page": 2} gives page 2' in first["text"]
    names = {
        line[2:].split(" (")[0]
        for page in pages
        for line in page["text"].splitlines()
        if line.startswith("- ")
    }
    assert names == {f"note-{number:02d}" for number in range(30)}
    assert beyond["error"]["code"] == -32011
    assert (unpaged["text"], unpaged["page"], unpaged["pages"]) == (whole, 1, 1)
    assert [entry["name"] for entry in index["records"]] == [f"note-{n:02d}" for n in range(10, 20)]
    assert (index["page"], index["pages"]) == (2, 3)
    assert len(hits["hits"]) == 5
    assert hits["more"] is False
