"""One renderer: hook, `lazy memory context`, the engine and MCP recall give the same section.

Byte for byte, for both roles (each with its own preamble), for a store with records, with a
compact and for one that cannot be read; the engine's methods page what is too large for one
answer; and the hook's closing line names the pages recall then gives, no more and no fewer.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from mcp.types import TextContent

from lazy_memory.engine.context import COMPACT_PREAMBLES, PREAMBLES, Role
from tests.e2e.conftest import Lazy
from tests.e2e.mcp_sessions import Connect
from tests.support.jsonrpc import RawClient


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


async def mcp_section(connect: Connect, **environment: str) -> str:
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


@pytest.mark.parametrize("state", ["records", "compacted", "unreadable"])
async def test_every_way_in_gives_the_same_section_for_each_role(
    lazy: Lazy,
    connect: Connect,
    tmp_path: Path,
    project: Path,
    isolated_environment: Path,
    state: str,
) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 100\n", encoding="utf-8")
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    lazy("memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "b")
    broken = state == "unreadable"
    if state == "compacted":
        for number in range(12):  # enough lines for the mechanical compact to be the smaller
            lazy("memory", "save", f"n-{number}", "-t", "project", "-d", f"note {number}")
        assert lazy("memory", "compact", "--mechanical").returncode == 0
        lazy("memory", "save", "newer", "-t", "user", "-d", "Written since", "--body", "b")
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
        assert agent_text == builder
        return
    preambles = COMPACT_PREAMBLES if state == "compacted" else PREAMBLES
    assert builder.startswith(preambles[Role.BUILDER] + "\n\n")
    assert agent_text.startswith(preambles[Role.AGENT] + "\n\n")
    assert "Save new knowledge with lazy_memory_save" in builder
    assert "Agents are read-only" in agent_text
    assert "lazy_memory_save" not in agent_text
    assert "deploy" in builder
    assert ("- newer (user): Written since" in builder) is (state == "compacted")
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


@pytest.mark.parametrize(("page_chars", "calls"), [(100_000, 1), (2_000, None)])
async def test_the_hook_names_the_pages_recall_gives(
    lazy: Lazy,
    connect: Connect,
    project: Path,
    page_chars: int,
    calls: int | None,
) -> None:
    (project / "lazy.toml").write_text(
        f"[claude_code]\nhook_limit_chars = 1500\ntool_result_limit_chars = {page_chars}\n",
        encoding="utf-8",
    )
    for number in range(40):
        description = f"what note {number} is about, in a line of its own"
        lazy("memory", "save", f"note-{number:02d}", "-t", "project", "-d", description)

    closing = next(
        line for line in hook(lazy).stdout.splitlines() if "records are not listed here" in line
    )
    async with connect() as client:
        if calls == 1:
            assert "lazy_memory_recall(), which returns every record's line in one call" in closing
            pages = [await client.call_tool("lazy_memory_recall", {})]
            beyond = await client.call_tool("lazy_memory_recall", {"page": 2})
        else:
            named = re.search(
                r"in (\d+) calls, lazy_memory_recall\(page=1\) to "
                r"lazy_memory_recall\(page=(\d+)\),",
                closing,
            )
            assert named is not None, closing
            count = int(named[1])
            assert count == int(named[2]) > 1
            pages = [
                await client.call_tool("lazy_memory_recall", {"page": number})
                for number in range(1, count + 1)
            ]
            beyond = await client.call_tool("lazy_memory_recall", {"page": count + 1})

    texts = []
    for result in pages:
        assert not result.is_error
        [block] = result.content
        assert isinstance(block, TextContent)
        texts.append(block.text)
    # Every page but the last names the next; the last names none, and there is no next.
    assert all(
        f"lazy_memory_recall(page={n + 1}) gives page" in t for n, t in enumerate(texts[:-1], 1)
    )
    assert "gives page" not in texts[-1]
    assert beyond.is_error
    assert index_names("".join(texts)) == {f"note-{number:02d}" for number in range(40)}
