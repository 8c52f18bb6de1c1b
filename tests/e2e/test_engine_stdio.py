"""`lazy engine` over stdio, driven by a raw JSON-RPC client: the JSON on the wire is asserted."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from tests.e2e.store_history import history
from tests.support.jsonrpc import RawClient

StartEngine = Callable[..., Awaitable[RawClient]]
SAVE = {"name": "deploy-steps", "type": "project", "description": "How we deploy", "body": "make"}


@pytest.fixture
async def start_engine(tmp_path: Path) -> AsyncIterator[StartEngine]:
    """Start `lazy engine` processes (with extra environment); killed if a test leaves them."""
    clients: list[RawClient] = []

    async def start(**environment: str) -> RawClient:
        client = await RawClient.spawn(
            ["engine"], {**os.environ, **environment}, tmp_path / "engine.log"
        )
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.kill()


@pytest.fixture
async def engine(start_engine: StartEngine) -> RawClient:
    """An initialized engine for a builder named builder-7."""
    client = await start_engine(LAZY_ACTOR="builder-7")
    assert "result" in await client.initialize()
    return client


async def test_lifecycle_initialize_shutdown_exit(start_engine: StartEngine) -> None:
    client = await start_engine()

    initialized = await client.initialize()

    assert initialized["id"] == 1
    assert initialized["result"]["serverInfo"]["name"] == "lazy-memory"
    assert await client.close() == 0


async def test_shutdown_and_exit_with_null_params_end_the_engine_cleanly(
    start_engine: StartEngine,
) -> None:
    # Clients built on older vscode-jsonrpc send LSP's params-less messages so.
    client = await start_engine()
    await client.initialize()

    shutdown = await client.exchange({"jsonrpc": "2.0", "method": "shutdown", "params": None})
    await client.send({"jsonrpc": "2.0", "method": "exit", "params": None})

    assert shutdown["result"] is None, shutdown
    assert client.process is not None
    assert await asyncio.wait_for(client.process.wait(), 30) == 0


async def test_null_params_are_params_left_out(engine: RawClient) -> None:
    def without_id(response: dict[str, object]) -> dict[str, object]:
        return {key: value for key, value in response.items() if key != "id"}

    for method in ("lazy/doctor", "lazy/memory/recall", "lazy/memory/save"):
        null = await engine.exchange({"jsonrpc": "2.0", "method": method, "params": None})
        left_out = await engine.exchange({"jsonrpc": "2.0", "method": method})
        assert without_id(null) == without_id(left_out), method


async def test_a_removed_record_is_not_found_with_the_revision_that_removed_it(
    engine: RawClient,
) -> None:
    await engine.result("lazy/memory/save", SAVE)
    await engine.result("lazy/memory/rm", {"name": "deploy-steps"})

    for method in ("lazy/memory/recall", "lazy/memory/rm"):
        error = (await engine.request(method, {"name": "deploy-steps"}))["error"]
        assert (error["code"], error["data"]) == (
            -32010,
            {"type": "NotFound", "removed_revision": 2},
        )
        assert "it was removed at revision 2; a save of that name revives it" in error["message"]


async def test_exit_without_shutdown_is_status_one(start_engine: StartEngine) -> None:
    client = await start_engine()
    await client.initialize()
    await client.notify("exit")
    assert client.process is not None
    assert await client.process.wait() == 1


async def test_save_recall_history_rm_context_on_the_wire(engine: RawClient) -> None:
    saved = await engine.request("lazy/memory/save", SAVE)

    # The save answers with the record, and what it did to it.
    record = saved["result"]
    assert (saved["jsonrpc"], record.pop("outcome")) == ("2.0", "created")
    assert {k: record[k] for k in ("name", "type", "description", "body", "revision")} == {
        **SAVE,
        "revision": 1,
    }
    assert record["updated_by"] == {"kind": "builder", "detail": "builder-7"}
    assert record["updated_at"].endswith("Z")

    assert await engine.result("lazy/memory/recall") == {
        "records": [
            {
                "name": "deploy-steps",
                "type": "project",
                "description": "How we deploy",
                "revision": 1,
                "updated_at": record["updated_at"],
            }
        ]
    }
    assert await engine.result("lazy/memory/recall", {"name": "deploy-steps"}) == {"record": record}

    context = await engine.result("lazy/memory/context", {"role": "builder"})
    assert "- deploy-steps (project): How we deploy\n" in context["text"]
    assert "lazy_memory_recall" in context["text"]
    assert context["bytes"] == len(context["text"].encode("utf-8"))

    removed = await engine.result("lazy/memory/rm", {"name": "deploy-steps"})
    assert (removed["operation"], removed["revision"]) == ("rm", 2)
    entries = (await engine.result("lazy/memory/history", {"name": "deploy-steps"}))["entries"]
    assert [(e["revision"], e["operation"], e["actor"]["detail"]) for e in entries] == [
        (1, "save", "builder-7"),
        (2, "rm", "builder-7"),
    ]
    assert await engine.result("lazy/memory/recall") == {"records": []}
    assert await engine.close() == 0


@pytest.mark.parametrize(
    ("method", "params", "code", "error_type"),
    [
        ("lazy/memory/recall", {"name": "ghost"}, -32010, "NotFound"),
        ("lazy/memory/rm", {"name": "ghost"}, -32010, "NotFound"),
        ("lazy/memory/save", {**SAVE, "name": "bad/name"}, -32011, "InvalidRecord"),
        ("lazy/memory/save", {**SAVE, "description": "x" * 201}, -32011, "InvalidRecord"),
        ("lazy/memory/save", {**SAVE, "type": "opinion"}, -32011, "InvalidRecord"),
        ("lazy/memory/save", {**SAVE, "if_revision": 4}, -32012, "Conflict"),
    ],
)
async def test_engine_errors_have_stable_codes(
    engine: RawClient, method: str, params: dict[str, object], code: int, error_type: str
) -> None:
    response = await engine.request(method, params)

    assert response["error"]["code"] == code
    assert response["error"]["data"] == {"type": error_type}
    assert response["error"]["message"]
    assert history() == []


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({**SAVE, "body": 5}, "body"),
        ({"name": "n"}, "type"),
        ({**SAVE, "actor": {"kind": "human", "detail": "root"}}, "actor"),
        ({**SAVE, "nested": {"jsonrpc": "2.0", "method": "exit"}}, "nested"),
        ({**SAVE, "if_revision": -1}, "if_revision"),
        (["deploy-steps"], "params"),
    ],
)
async def test_wrongly_typed_params_are_invalid_params(
    engine: RawClient, params: object, problem: str
) -> None:
    response = await engine.request("lazy/memory/save", params)

    assert response["error"]["code"] == -32602
    assert problem in response["error"]["message"]
    assert await engine.result("lazy/memory/recall") == {"records": []}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("lazy/memory/import", {"apply": "yes"}),
        ("lazy/memory/import", {"apply": 1}),
        ("lazy/memory/compact", {"show": "true"}),
        ("lazy/memory/compact", {"clear": 0}),
    ],
)
async def test_booleans_are_strict(
    engine: RawClient, method: str, params: dict[str, object]
) -> None:
    response = await engine.request(method, params)

    assert response["error"]["code"] == -32602, response
    assert next(iter(params)) in response["error"]["message"]


async def test_requests_before_initialize_are_refused(start_engine: StartEngine) -> None:
    client = await start_engine()

    refused = await client.request("lazy/memory/recall")

    assert refused["error"]["code"] == -32002
    await client.initialize()
    assert await client.result("lazy/memory/recall") == {"records": []}


async def test_an_agent_cannot_write_whatever_it_sends(start_engine: StartEngine) -> None:
    builder = await start_engine(LAZY_ACTOR="builder-1")
    await builder.initialize()
    await builder.result("lazy/memory/save", SAVE)
    agent = await start_engine(LAZY_ACTOR="builder-1", LAZY_TASK_ID="task-42")
    await agent.initialize()

    saved = await agent.request("lazy/memory/save", {**SAVE, "name": "agent-note"})
    removed = await agent.request("lazy/memory/rm", {"name": "deploy-steps"})

    for refused in (saved, removed):
        assert refused["error"]["code"] == -32013
        assert refused["error"]["data"] == {"type": "PermissionDenied"}
        assert "read-only" in refused["error"]["message"]
    assert (await agent.result("lazy/memory/recall", {"name": "deploy-steps"}))["record"]
    assert len(history()) == 1


async def test_garbage_on_the_wire_gets_errors_and_the_engine_keeps_serving(
    engine: RawClient,
) -> None:
    await engine.send_raw(b"Content-Length: 9\r\n\r\n{not json")
    assert (await engine.next_error())["error"]["code"] == -32700

    await engine.send_raw(b"Content-Length: 7\r\n\r\n[1,2,3]")
    assert (await engine.next_error())["error"]["code"] == -32600

    await engine.send({"jsonrpc": "1.0", "id": 99, "method": "lazy/memory/recall"})
    assert (await engine.next_error())["error"] == {
        "code": -32600,
        "message": 'a JSON-RPC message must have "jsonrpc": "2.0"',
    }

    unknown = await engine.request("lazy/memory/teleport", {})
    assert unknown["error"]["code"] == -32601

    huge = {**SAVE, "body": "x" * (10 * 1024 * 1024)}
    await engine.send({"jsonrpc": "2.0", "id": 500, "method": "lazy/memory/save", "params": huge})
    refused = await engine.next_error()
    assert refused["error"]["code"] == -32600
    assert "limit" in refused["error"]["message"]

    assert (await engine.result("lazy/memory/save", SAVE))["revision"] == 1
    assert await engine.close() == 0


async def test_broken_framing_closes_the_connection(engine: RawClient) -> None:
    await engine.send_raw(b"X-Nonsense: 1\r\n\r\n")

    closing = await engine.next_error()

    assert closing["error"]["code"] == -32700
    assert "closing the connection" in closing["error"]["message"]
    assert await engine.closed_by_peer()


async def test_a_client_that_disconnects_mid_request_leaves_the_store_whole(
    engine: RawClient,
) -> None:
    await engine.result("lazy/memory/save", SAVE)
    await engine.send_raw(b'Content-Length: 200\r\n\r\n{"jsonrpc": "2.0", "id": 9, "meth')
    engine.writer.close()

    assert engine.process is not None
    assert await engine.process.wait() == 0
    assert [entry["revision"] for entry in history()] == [1]


def test_record_commands_never_import_pygls(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lazy_memory.rpc.cli", "memory", "list"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    imported = {line.split("|")[-1].strip() for line in finished.stderr.splitlines()}
    assert "lazy_memory.rpc.cli.memory" in imported
    assert not {name for name in imported if name.split(".")[0] in ("pygls", "lsprotocol")}


async def test_compact_and_doctor_on_the_wire(engine: RawClient) -> None:
    await engine.result("lazy/memory/save", SAVE)

    rejected = await engine.request("lazy/memory/compact", {"mode": "mechanical"})
    both = await engine.request("lazy/memory/compact", {"show": True, "clear": True})
    shown = await engine.result("lazy/memory/compact", {"show": True})
    cleared = await engine.result("lazy/memory/compact", {"clear": True})
    diagnosis = await engine.result("lazy/doctor", {})

    assert rejected["error"]["code"] == -32015
    assert rejected["error"]["data"] == {"type": "CompactRejected"}
    assert both["error"]["code"] == -32602
    assert shown["status"]["compact"] is None
    assert shown["status"]["bytes_without"] == shown["status"]["bytes_with"]
    assert cleared == {"cleared": False}
    assert diagnosis["remedy"] == "none"
    assert diagnosis["record_count"] == 1


async def test_an_agent_cannot_compact(start_engine: StartEngine) -> None:
    agent = await start_engine(LAZY_TASK_ID="task-1")
    await agent.initialize()

    refused = await agent.request("lazy/memory/compact", {"mode": "mechanical"})
    cleared = await agent.request("lazy/memory/compact", {"clear": True})

    assert refused["error"]["code"] == -32013
    assert cleared["error"]["code"] == -32013


async def test_search_on_the_wire(engine: RawClient) -> None:
    await engine.result("lazy/memory/save", SAVE)
    await engine.result(
        "lazy/memory/save",
        {"name": "style", "type": "feedback", "description": "Deploy on Tuesdays", "body": "b"},
    )
    await engine.result("lazy/memory/save", {**SAVE, "name": "gone"})
    await engine.result("lazy/memory/rm", {"name": "gone"})

    found = await engine.result("lazy/search", {"query": "in:memories deploy"})
    limited = await engine.result("lazy/search", {"query": "deploy", "limit": 1})
    typed = await engine.result("lazy/search", {"query": "deploy type:feedback"})
    nothing = await engine.result("lazy/search", {"query": "giraffe"})

    assert [hit["name"] for hit in found["hits"]] == ["deploy-steps", "style"]
    first = found["hits"][0]
    assert set(first) == {"name", "type", "description", "snippet", "score"}
    assert (first["type"], first["description"]) == ("project", "How we deploy")
    assert "«deploy»" in first["snippet"]
    assert isinstance(first["score"], float)
    assert first["score"] > found["hits"][1]["score"]
    assert limited == {"hits": found["hits"][:1], "more": True}
    assert [hit["name"] for hit in typed["hits"]] == ["style"]
    assert nothing == {"hits": [], "more": False}


@pytest.mark.parametrize(
    ("params", "code", "problem"),
    [
        ({"query": '"unclosed'}, -32018, "column 1"),
        ({"query": "in:notes x"}, -32018, "the scopes there are: memories"),
        ({"query": ""}, -32018, "nothing to look for"),
        ({"query": "x", "limit": 0}, -32602, "limit"),
        ({"query": "x", "limit": 201}, -32602, "limit"),
        ({"query": 5}, -32602, "query"),
        ({}, -32602, "query"),
        ({"query": "x", "scope": "memories"}, -32602, "scope"),
    ],
)
async def test_a_bad_search_is_an_error_naming_the_problem(
    engine: RawClient, params: dict[str, object], code: int, problem: str
) -> None:
    response = await engine.request("lazy/search", params)

    assert response["error"]["code"] == code
    assert problem in response["error"]["message"]
    if code == -32018:
        assert response["error"]["data"] == {"type": "InvalidQuery"}
