"""`lazy engine` and `lazy mcp` start, and keep serving, when the store cannot be opened.

They answer `initialize`, give the UNAVAILABLE marker for the launch section, return the
store's error for everything else, and pick the store up once it is repaired, without a
restart.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.types import TextContent

from tests.e2e.jsonrpc import RawClient
from tests.e2e.test_mcp import Connect, connect  # noqa: F401  (the fixture)

MARKER = "MEMORY INDEX UNAVAILABLE ("
STORAGE_UNAVAILABLE = -32014
SAVE = {"name": "deploy", "type": "project", "description": "How we deploy", "body": "make"}


def corrupt(data_dir: Path) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    database = data_dir / "memory.db"
    database.write_bytes(b"not a database at all " * 200)
    return database


async def test_the_engine_serves_the_marker_and_errors_then_recovers(
    tmp_path: Path, isolated_environment: Path
) -> None:
    database = corrupt(isolated_environment)
    engine = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log")
    try:
        assert "result" in await engine.initialize()

        context = await engine.result("lazy/memory/context", {"role": "builder"})
        refused = await engine.request("lazy/memory/save", SAVE)
        recalled = await engine.request("lazy/memory/recall", {"name": "deploy"})
        database.unlink()
        saved = await engine.result("lazy/memory/save", SAVE)
        repaired = await engine.result("lazy/memory/context", {"role": "builder"})
    finally:
        await engine.close()

    assert context["text"].startswith(MARKER)
    assert "memory.db" in context["text"]
    assert context["available"] is False
    assert refused["error"]["code"] == STORAGE_UNAVAILABLE
    assert recalled["error"]["code"] == STORAGE_UNAVAILABLE
    assert saved["revision"] == 1
    assert "- deploy (project): How we deploy\n" in repaired["text"]
    assert "cannot be opened" in (tmp_path / "engine.log").read_text(encoding="utf-8")


def text_of(result: object) -> str:
    blocks = getattr(result, "content", [])
    return "".join(block.text for block in blocks if isinstance(block, TextContent))


async def test_mcp_serves_the_marker_and_errors_then_recovers(
    connect: Connect,  # noqa: F811  (the fixture imported above)
    isolated_environment: Path,
) -> None:
    database = corrupt(isolated_environment)
    async with connect() as client:
        index = await client.call_tool("lazy_memory_recall", {})
        one = await client.call_tool("lazy_memory_recall", {"name": "deploy"})
        found = await client.call_tool("lazy_search", {"query": "deploy"})
        refused = await client.call_tool("lazy_memory_save", SAVE)
        database.unlink()
        saved = await client.call_tool("lazy_memory_save", SAVE)
        repaired = await client.call_tool("lazy_memory_recall", {})

    assert not index.is_error
    assert text_of(index).startswith(MARKER)
    for failed in (one, found, refused):
        assert failed.is_error
        assert "memory.db" in text_of(failed)
    assert not saved.is_error, text_of(saved)
    assert "- deploy (project): How we deploy\n" in text_of(repaired)
