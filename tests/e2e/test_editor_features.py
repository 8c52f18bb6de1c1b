"""The engine's LSP features for editors, over stdio, asserted on the raw JSON of the wire."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.editor_sessions import (
    CODE_LENSES,
    INLAY_HINTS,
    URI,
    StartEditor,
    at,
    lazy,
    next_message,
    open_document,
    save,
    span,
)
from tests.support.jsonrpc import RawClient


async def test_initialize_declares_every_editor_feature(start_editor: StartEditor) -> None:
    client = await start_editor(INLAY_HINTS)
    response = await client.request("initialize", {"processId": None, "capabilities": {}})
    assert "error" in response, "initialize is answered once per connection"
    fresh = await RawClient.spawn(["engine"], dict(os.environ), Path(os.devnull))
    capabilities = (await fresh.initialize())["result"]["capabilities"]
    await fresh.close()
    assert capabilities["hoverProvider"] is True
    assert capabilities["completionProvider"]["triggerCharacters"] == [":", "["]
    for provider in ("inlayHintProvider", "codeLensProvider", "documentLinkProvider"):
        assert provider in capabilities
    assert capabilities["workspaceSymbolProvider"]
    assert capabilities["executeCommandProvider"]["commands"] == [
        "lazy-memory.save",
        "lazy-memory.rm",
        "lazy-memory.compact",
        "lazy-memory.doctor",
        "lazy-memory.show",
    ]


async def test_hover_shows_the_record_for_each_way_of_naming_it(start_editor: StartEditor) -> None:
    save("deploy-steps", "How we deploy to production", "1. make deploy")
    client = await start_editor(INLAY_HINTS)
    await open_document(
        client, "see memory:deploy-steps.\n[[deploy-steps]]\nask deploy-steps or bob"
    )

    for line, character, reference in ((0, 12, span(0, 4, 23)), (1, 3, span(1, 0, 16))):
        hover = await client.result("textDocument/hover", at(line, character))
        assert hover["range"] == reference
        assert hover["contents"]["kind"] == "markdown"
        text = hover["contents"]["value"]
        assert text.startswith("**deploy-steps** · project · revision 1 · last written by human")
        assert "_How we deploy to production_" in text
        assert text.endswith("1. make deploy\n")
    bare = await client.result("textDocument/hover", at(2, 6))
    assert bare["range"] == span(2, 4, 16)
    assert await client.result("textDocument/hover", at(2, 21)) is None, "bob is no record"


async def test_completion_offers_record_names_after_memory_and_wiki_openings(
    start_editor: StartEditor,
) -> None:
    save("deploy-steps", "How we deploy")
    save("db-migrations", "How schema changes ship")
    save("oncall", "Who is on call")
    client = await start_editor(INLAY_HINTS)
    await open_document(client, "memory:d\n[[on\nplain d")

    listed = await client.result("textDocument/completion", at(0, 8))
    assert listed["isIncomplete"] is False
    assert [item["label"] for item in listed["items"]] == ["db-migrations", "deploy-steps"]
    first = listed["items"][0]
    assert first["detail"] == "project"
    assert first["documentation"] == "How schema changes ship"
    assert first["textEdit"] == {"range": span(0, 7, 8), "newText": "db-migrations"}

    wiki = await client.result("textDocument/completion", at(1, 4))
    assert [item["textEdit"] for item in wiki["items"]] == [
        {"range": span(1, 2, 4), "newText": "oncall]]"},
        {"range": span(1, 2, 4), "newText": "db-migrations]]"},
    ], "names starting with what was typed come first, then names containing it"
    assert await client.result("textDocument/completion", at(2, 7)) is None


async def test_descriptions_show_as_inlay_hints_or_as_code_lenses_by_client(
    start_editor: StartEditor,
) -> None:
    save("deploy-steps", "How we deploy")
    hints_client = await start_editor(INLAY_HINTS)
    lens_client = await start_editor(CODE_LENSES)
    text = "x memory:deploy-steps and [[missing]]"
    document = {"textDocument": {"uri": URI}}
    for client in (hints_client, lens_client):
        await open_document(client, text)

    whole = {**document, "range": {"start": at(0, 0)["position"], "end": at(1, 0)["position"]}}
    hints = await hints_client.result("textDocument/inlayHint", whole)
    assert hints == [
        {
            "position": {"line": 0, "character": 21},
            "label": "How we deploy",
            "tooltip": "deploy-steps (project), revision 1",
            "paddingLeft": True,
        }
    ]
    assert await hints_client.result("textDocument/codeLens", document) == []
    lenses = await lens_client.result("textDocument/codeLens", document)
    show = {"uri": "lazy-memory:deploy-steps"}
    assert lenses == [
        {
            "range": span(0, 2, 21),
            "command": {
                "title": "deploy-steps: How we deploy",
                "command": "lazy-memory.show",
                "arguments": [show],
            },
        }
    ]
    run = {"command": "lazy-memory.show", "arguments": [show]}
    shown = await lens_client.result("workspace/executeCommand", run)
    assert shown["name"] == "deploy-steps", "running a lens answers the record's document"


async def test_diagnostics_flag_unknown_and_removed_records_and_follow_other_writers(
    start_editor: StartEditor,
) -> None:
    save("gone", "Soon removed")
    lazy("memory", "rm", "gone")
    save("kept", "Still here")
    client = await start_editor(CODE_LENSES)
    await open_document(client, "[[kept]] [[gone]] memory:later")

    published = (await next_message(client, "textDocument/publishDiagnostics"))["params"]
    assert published["uri"] == URI
    assert [
        (d["range"], d["message"], d["severity"], d["code"]) for d in published["diagnostics"]
    ] == [
        (span(0, 11, 15), "memory record gone was removed", 2, "removed-record"),
        (span(0, 25, 30), "no memory record named later", 2, "unknown-record"),
    ]
    assert {d["source"] for d in published["diagnostics"]} == {"lazy-memory"}

    save("later", "Written by another process")
    changed = await next_message(client, "lazy/memory/changed")
    assert changed["params"] == {"name": "later", "revision": 1, "operation": "save"}
    republished = (await next_message(client, "textDocument/publishDiagnostics"))["params"]
    assert [d["message"] for d in republished["diagnostics"]] == ["memory record gone was removed"]
    await next_message(client, "workspace/codeLens/refresh")


async def test_document_links_point_at_the_records_read_only_documents(
    start_editor: StartEditor,
) -> None:
    save("deploy-steps", "How we deploy", "make deploy")
    client = await start_editor(INLAY_HINTS)
    await open_document(client, "memory:deploy-steps [[missing]]")
    links = await client.result("textDocument/documentLink", {"textDocument": {"uri": URI}})
    assert links == [
        {"range": span(0, 7, 19), "target": "lazy-memory:deploy-steps", "tooltip": "How we deploy"}
    ]
    document = await client.result("lazy/memory/document", {"uri": links[0]["target"]})
    assert document["name"] == "deploy-steps"
    assert document["text"].endswith("make deploy\n")
    for uri in ("lazy-memory:missing", "file:///etc/passwd"):
        error = (await client.request("lazy/memory/document", {"uri": uri}))["error"]
        assert (error["code"], error["data"]["type"]) == (-32010, "NotFound")


async def test_workspace_symbols_search_the_records(start_editor: StartEditor) -> None:
    save("deploy-steps", "How we deploy to production")
    save("oncall", "Who is on call this week")
    client = await start_editor(INLAY_HINTS)

    found = await client.result("workspace/symbol", {"query": "production"})
    assert found == [
        {
            "name": "deploy-steps",
            "kind": 2,
            "containerName": "project",
            "location": {"uri": "lazy-memory:deploy-steps", "range": span(0, 0, 0)},
        }
    ]
    everything = await client.result("workspace/symbol", {"query": ""})
    assert [symbol["name"] for symbol in everything] == ["deploy-steps", "oncall"]
    partial = await client.result("workspace/symbol", {"query": "onc type:"})
    assert [symbol["name"] for symbol in partial] == [], "an unfinished query is no error"


async def test_commands_save_remove_compact_and_doctor_as_the_methods_do(
    start_editor: StartEditor,
) -> None:
    for number in range(12):
        save(f"note-{number}", f"A project note long enough to make a compact worth it, {number}")
    client = await start_editor(INLAY_HINTS)
    record = {"name": "from-editor", "type": "feedback", "description": "Saved", "body": "b"}

    saved = await client.result(
        "workspace/executeCommand", {"command": "lazy-memory.save", "arguments": [record]}
    )
    assert (saved["revision"], saved["updated_by"]) == (
        1,
        {"kind": "builder", "detail": "editor-user"},
    )
    compacted = await client.result(
        "workspace/executeCommand",
        {"command": "lazy-memory.compact", "arguments": [{"mode": "mechanical"}]},
    )
    assert compacted["outcome"]["compact"]["generator"] == "mechanical"
    doctor = await client.result("workspace/executeCommand", {"command": "lazy-memory.doctor"})
    assert (doctor["record_count"], doctor["compact_exists"]) == (13, True)
    removed = await client.result(
        "workspace/executeCommand",
        {"command": "lazy-memory.rm", "arguments": [{"name": "from-editor"}]},
    )
    assert (removed["operation"], removed["revision"]) == ("rm", 2)

    missing = await client.request(
        "workspace/executeCommand",
        {"command": "lazy-memory.rm", "arguments": [{"name": "from-editor"}]},
    )
    assert missing["error"]["code"] == -32010
    invalid = await client.request(
        "workspace/executeCommand", {"command": "lazy-memory.save", "arguments": [{"name": "x"}]}
    )
    assert invalid["error"]["code"] == -32602
    unknown = await client.request("workspace/executeCommand", {"command": "lazy-memory.nope"})
    assert unknown["error"]["code"] == -32602


async def test_an_agent_can_read_but_no_command_writes(start_editor: StartEditor) -> None:
    save("kept", "Still here")
    client = await start_editor(INLAY_HINTS, LAZY_TASK_ID="task-42")
    writes = [
        ("lazy-memory.save", {"name": "x", "type": "user", "description": "d", "body": "b"}),
        ("lazy-memory.rm", {"name": "kept"}),
        ("lazy-memory.compact", {"mode": "mechanical"}),
    ]
    for command, params in writes:
        response = await client.request(
            "workspace/executeCommand", {"command": command, "arguments": [params]}
        )
        assert response["error"]["code"] == -32013, command
        assert response["error"]["data"]["type"] == "PermissionDenied"
    doctor = await client.result("workspace/executeCommand", {"command": "lazy-memory.doctor"})
    assert (doctor["record_count"], doctor["compact_exists"]) == (1, False)


async def test_ranges_are_counted_in_utf16_code_units(start_editor: StartEditor) -> None:
    save("deploy-steps", "How we deploy")
    client = await start_editor(INLAY_HINTS)
    await open_document(client, "🚀 memory:deploy-steps")
    hover = await client.result("textDocument/hover", at(0, 5))
    assert hover["range"] == span(0, 3, 22), "the rocket is two UTF-16 units"
