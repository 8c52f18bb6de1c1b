"""`lazy engine` and `lazy mcp` start, and keep serving, when the store cannot be opened.

They answer `initialize`, give the UNAVAILABLE marker for the launch section and for the
index (the engine's `lazy/memory/recall` without a name, whole or paged), return the store's
error for everything else, and pick the store up once it is repaired, without a
restart.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.types import TextContent

from tests.e2e.mcp_sessions import Connect
from tests.support.jsonrpc import RawClient

MARKER = "MEMORY INDEX UNAVAILABLE ("
STORAGE_UNAVAILABLE = -32014
SAVE = {"name": "deploy", "type": "project", "description": "How we deploy", "body": "make"}


def corrupt(data_dir: Path, store_file: str = "memory.db") -> Path:
    """The store's file in data_dir, garbage: the store cannot be read."""
    data_dir.mkdir(parents=True, exist_ok=True)
    database = data_dir / store_file
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


STORES = {
    # A backend, and the file whose garbage makes its store unreadable.
    "sqlite": "memory.db",
    "files": "memories.json",
}


@pytest.mark.parametrize("backend", STORES)
async def test_the_engine_s_index_recall_is_the_marker_whole_and_paged_never_an_empty_index(
    tmp_path: Path, isolated_environment: Path, backend: str
) -> None:
    broken = corrupt(isolated_environment, STORES[backend])
    environment = {**os.environ, "LAZY_STORAGE": backend}
    engine = await RawClient.spawn(["engine"], environment, tmp_path / "engine.log")
    try:
        assert "result" in await engine.initialize()

        whole = await engine.result("lazy/memory/recall", {})
        paged = await engine.result("lazy/memory/recall", {"page": 1, "page_size": 10})
        beyond = await engine.result("lazy/memory/recall", {"page": 7})
        context = await engine.result("lazy/memory/context", {"role": "agent"})
        broken.unlink()
        await engine.result("lazy/memory/save", SAVE)
        repaired = await engine.result("lazy/memory/recall", {})
        repaired_page = await engine.result("lazy/memory/recall", {"page": 1})
    finally:
        await engine.close()

    for answer in (whole, paged, beyond):
        # records is there and null: a client that reads only it fails, never shows "none".
        assert answer == {
            "records": None,
            "unavailable": context["text"],
            "error": context["error"],
        }
    assert whole["unavailable"].startswith(MARKER)
    assert STORES[backend] in whole["error"]
    assert [record["name"] for record in repaired["records"]] == ["deploy"]
    assert "unavailable" not in repaired
    assert repaired_page["records"] == repaired["records"]
    assert (repaired_page["page"], repaired_page["pages"]) == (1, 1)
    log = (tmp_path / "engine.log").read_text(encoding="utf-8")
    assert f"memory index unavailable: {whole['error']}" in log


async def test_an_empty_store_s_index_is_an_empty_list_and_no_marker(
    tmp_path: Path, isolated_environment: Path
) -> None:
    engine = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log")
    try:
        assert "result" in await engine.initialize()
        whole = await engine.result("lazy/memory/recall", {})
        paged = await engine.result("lazy/memory/recall", {"page": 1})
    finally:
        await engine.close()

    assert whole == {"records": []}
    assert paged == {"records": [], "page": 1, "pages": 1}


def text_of(result: object) -> str:
    blocks = getattr(result, "content", [])
    return "".join(block.text for block in blocks if isinstance(block, TextContent))


async def test_mcp_serves_the_marker_and_errors_then_recovers(
    connect: Connect,
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
