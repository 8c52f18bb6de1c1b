"""A save's rules as every client sees them (#18 points 5-8): the CLI, the engine's JSON-RPC,
the MCP tool, and the importer's preview, through the real `lazy`.

An unchanged save says `unchanged, revision N` and writes nothing; a removed name revives
without -t/-d; an --if-revision a removed record cannot match says how to revive it;
imported names with long descriptions are shortened, removed and revived by their exact
names; front matter after a byte-order mark is read as front matter.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lazy_memory.adapters import open_service
from lazy_memory.adapters.config import load_settings
from lazy_memory.engine.identity import Identity
from lazy_memory.rpc.mcp.tools import McpTools
from tests.e2e.conftest import Lazy
from tests.support.actors import BUILDER
from tests.support.jsonrpc import RawClient

SAVE = {"name": "deploy", "type": "project", "description": "How we deploy", "body": "make"}
LONG = "A description far longer than the authoring limit, the kind the hint names. " * 4
IMPORTED_NAMES = [
    "Project Overview",
    "배포 절차",
    '"Golden" test files',
    "Don't mock the database",
    "API keys, secrets & env vars",
]
"""Spaces, capitals, Korean, quotes and a comma: names real harness files carry."""


def history(lazy: Lazy, name: str) -> list[dict[str, object]]:
    listed = lazy("memory", "history", "--json", "--", name)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def test_the_cli_says_unchanged_and_writes_nothing(lazy: Lazy) -> None:
    fields = ("-t", "project", "-d", "How we deploy", "--body", "m")
    created = lazy("memory", "save", "deploy", *fields)

    again = lazy("memory", "save", "deploy", *fields)
    as_json = lazy("memory", "save", "deploy", "-d", "How we deploy", "--json")
    checked = lazy("memory", "save", "deploy", "--body", "m", "--if-revision", "1")

    assert created.stdout == "created deploy (project), revision 1\n", created.stderr
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        "unchanged, revision 1: deploy already holds this type, description and body, so "
        "nothing was written\n"
    )
    assert (json.loads(as_json.stdout)["unchanged"], json.loads(as_json.stdout)["revision"]) == (
        True,
        1,
    )
    assert checked.stdout.startswith("unchanged, revision 1: "), checked.stderr
    assert [entry["revision"] for entry in history(lazy, "deploy")] == [1]
    edited = lazy("memory", "save", "deploy", "-d", "How we ship", "--if-revision", "1")
    assert edited.stdout == "updated deploy (project), revision 2\n", edited.stderr


async def test_the_engine_answers_unchanged_on_the_wire(tmp_path: Path) -> None:
    engine = await RawClient.spawn(
        ["engine"], {**os.environ, "LAZY_ACTOR": "builder-7"}, tmp_path / "engine.log"
    )
    try:
        assert "result" in await engine.initialize()

        first = await engine.result("lazy/memory/save", SAVE)
        again = await engine.result("lazy/memory/save", SAVE)
        checked = await engine.result("lazy/memory/save", {**SAVE, "if_revision": 1})
        entries = (await engine.result("lazy/memory/history", {"name": "deploy"}))["entries"]

        assert "unchanged" not in first
        assert first["outcome"] == "created"
        assert again == {**first, "outcome": "unchanged", "unchanged": True}
        assert checked == {**first, "outcome": "unchanged", "unchanged": True}
        assert [entry["revision"] for entry in entries] == [1]
        assert await engine.close() == 0
    finally:
        if engine.process is not None and engine.process.returncode is None:
            engine.process.kill()
            await engine.process.wait()


async def test_the_mcp_save_tool_says_unchanged(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    identity = Identity(actor=BUILDER)
    service = await open_service(load_settings(), identity)
    try:
        tools = McpTools(service, 500_000)
        first = await tools.call("lazy_memory_save", SAVE)
        again = await tools.call("lazy_memory_save", SAVE)
        entries = await service.history("deploy")
    finally:
        await service.aclose()

    assert again["isError"] is False
    [block] = again["content"]
    assert block["text"] == "unchanged, revision 1: deploy already held this content"
    assert (again["structuredContent"]["unchanged"], again["structuredContent"]["revision"]) == (
        True,
        1,
    )
    assert "unchanged" not in first["structuredContent"]
    assert len(entries) == 1


def test_a_removed_name_revives_without_type_or_description(lazy: Lazy) -> None:
    lazy("memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "first")
    lazy("memory", "rm", "style")

    stale = lazy("memory", "save", "style", "--body", "second", "--if-revision", "1")
    revived = lazy("memory", "save", "style", "--body", "second")
    shown = json.loads(lazy("memory", "show", "--json", "style").stdout)

    assert stale.returncode == 5
    assert stale.stderr == (
        "lazy: error: 'style' is removed (revision 2 removed it), so if_revision 1 cannot "
        "match: to revive it, save with if_revision 2 (--if-revision 2) or without one\n"
    )
    assert revived.stdout == "revived style (feedback), revision 3\n", revived.stderr
    assert (shown["type"], shown["description"], shown["body"]) == (
        "feedback",
        "Small modules",
        "second",
    )


def test_imported_names_are_shortened_removed_and_revived_by_their_exact_names(
    lazy: Lazy, memory_dir: Path
) -> None:
    for number, name in enumerate(IMPORTED_NAMES):
        quoted = json.dumps(name, ensure_ascii=False)
        (memory_dir / f"memory_{number}.md").write_text(
            f"---\nname: {quoted}\ndescription: {LONG}\ntype: reference\n---\nBody\n"
        )
    imported = lazy("doctor", "--import-memory", "--yes")
    assert imported.returncode == 0, imported.stderr

    for number, name in enumerate(IMPORTED_NAMES):
        shortened = lazy("memory", "save", "-d", "Shortened by a person", "--", name)
        again = lazy("memory", "save", "-d", "Shortened by a person", "--", name)
        removed = lazy("memory", "rm", "--", name)
        revived = lazy("memory", "save", "--body", "Back", "--", name)

        assert shortened.stdout == f"updated {name} (reference), revision 2\n", shortened.stderr
        assert again.stdout.startswith("unchanged, revision 2: "), again.stderr
        assert removed.returncode == 0, removed.stderr
        assert revived.stdout == f"revived {name} (reference), revision 4\n", revived.stderr
        shown = json.loads(lazy("memory", "show", "--json", "--", name).stdout)
        assert (shown["description"], shown["body"]) == ("Shortened by a person", "Back")
        assert shown["provenance"]["source"] == str(memory_dir / f"memory_{number}.md")
        text = lazy("memory", "history", "--", name).stdout
        assert "Revision 1 was imported at " in text
        assert f"UTC from {memory_dir / f'memory_{number}.md'}." in text


def test_front_matter_after_a_byte_order_mark_is_front_matter(lazy: Lazy, memory_dir: Path) -> None:
    text = "---\r\nname: Bom, note\r\ndescription: After a BOM\r\ntype: Gotcha\r\n---\r\nB\r\n"
    (memory_dir / "bom.md").write_bytes(b"\xef\xbb\xbf" + text.encode())

    preview = lazy("doctor", "--import-memory")
    lazy("doctor", "--import-memory", "--yes")
    shown = json.loads(lazy("memory", "show", "--json", "--", "Bom, note").stdout)

    assert f"  Bom, note (project)  from {memory_dir / 'bom.md'}\n" in preview.stdout
    assert "Note: Bom, note has the type 'Gotcha', outside the four" in preview.stdout
    assert (shown["description"], shown["body"]) == ("After a BOM", "B\r\n")
    assert shown["provenance"]["original_type"] == "Gotcha"


def test_an_imported_value_keeps_every_character_and_its_record_takes_a_new_body(
    lazy: Lazy, memory_dir: Path
) -> None:
    # A real memory file's description (#30 point 4), made longer than 200 characters: YAML
    # would have read `#47 closed, ...` as a comment and `~` as null.
    description = (
        "Security allowlist fully resolved 2026-03-24 \u2014 0 vulns, 0 entries, #47 closed, "
        "#66 closed; " + "every advisory checked by hand, &anchor, !tag, *alias and ~ kept. " * 3
    )
    (memory_dir / "allowlist.md").write_text(
        f"---\nname: allowlist\ndescription: {description}\nmetadata:\n  type: ~\n---\nBody\n"
    )
    assert lazy("doctor", "--import-memory", "--yes").returncode == 0

    shown = json.loads(lazy("memory", "show", "--json", "allowlist").stdout)
    new_body = lazy("memory", "save", "allowlist", "--body", "Checked again")
    new_type = lazy("memory", "save", "allowlist", "-t", "reference")
    longer = lazy("memory", "save", "allowlist", "-d", description + " More.")

    assert shown["description"] == description.rstrip()
    assert shown["provenance"]["original_type"] == "~"
    assert new_body.stdout == "updated allowlist (project), revision 2\n", new_body.stderr
    assert new_type.stdout == "updated allowlist (reference), revision 3\n", new_type.stderr
    assert longer.returncode == 4
    assert "the limit is 200" in longer.stderr
    after = json.loads(lazy("memory", "show", "--json", "allowlist").stdout)
    assert (after["description"], after["body"]) == (description.rstrip(), "Checked again")
