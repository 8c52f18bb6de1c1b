"""The name rule through every way a name enters a store (#17 point 3, #18 point 7).

One table of legal and illegal names (tests/support/name_table.py) goes through the real `lazy`
command: `lazy memory save`, the engine's `lazy/memory/save` (what the editors send), the MCP
tool, a daemon's storage methods, the import of harness files and `lazy memory migrate`.
Names an older import stored outside the rule stay reachable by their exact name.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.names import derived_name
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from tests.e2e.conftest import Lazy
from tests.support.actors import IMPORTER
from tests.support.daemon import LAZY, add_token, running_daemon
from tests.support.hostile_text import unsafe_characters
from tests.support.jsonrpc import RawClient
from tests.support.name_table import ILLEGAL, LEGAL

INVALID_RECORD = -32011
INVALID_PARAMS = -32602
HELD = ["tab\there", "old/path name", "x" * 300, ".hidden", "esc\x1b[31mred"]
"""Names an older import stored that today's rule refuses: each stays writable as it is."""
HELD_FORGING = ["two\nlines", "b (user): fake"]
"""Names an older import could store that would break or forge an index line if saved again."""


def is_text(name: str) -> bool:
    try:
        name.encode()
    except UnicodeEncodeError:
        return False
    return True


ARGV_ILLEGAL = [name for name in ILLEGAL if "\x00" not in name and is_text(name)]
"""What a command line can carry: no NUL, no lone surrogate."""


def save_params(name: str) -> dict[str, str]:
    return {"name": name, "type": "project", "description": "d", "body": "b"}


@asynccontextmanager
async def mcp_client(project: Path, log_folder: Path) -> AsyncIterator[ClientSession]:
    """The MCP SDK's client of `lazy mcp` in project, initialized."""
    parameters = StdioServerParameters(
        command=LAZY[0], args=[*LAZY[1:], "mcp"], env=dict(os.environ), cwd=project
    )
    with (log_folder / "mcp.log").open("a") as log:
        async with (
            stdio_client(parameters, errlog=log) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


def names_in(lazy: Lazy, **environment: str) -> set[str]:
    listed = lazy("memory", "list", "--json", environment=environment)
    assert listed.returncode == 0, listed.stderr
    return {record["name"] for record in json.loads(listed.stdout)}


async def seed_old_imports(data_dir: Path, root: Path, names: list[str]) -> None:
    """Store names as an older importer did, straight into the sqlite store."""
    storage = await open_storage(Settings(root=root, data_dir=data_dir))
    try:
        for name in names:
            content = RecordContent(name=name, type=RecordType.PROJECT, description="old", body="")
            at = datetime.now(UTC)
            await storage.save_record(content, actor=IMPORTER, at=at, operation=Operation.IMPORT)
    finally:
        await storage.aclose()


def test_the_command_line_saves_every_legal_name_and_refuses_every_illegal_one(
    lazy: Lazy,
) -> None:
    for name in LEGAL:
        # `--` first, so that a name starting with a dash is a name, not an option.
        saved = lazy("memory", "save", "-t", "user", "-d", "d", "--body", "b", "--", name)
        assert saved.returncode == 0, (name, saved.stderr)
        shown = lazy("memory", "show", "--json", "--", name)
        assert json.loads(shown.stdout)["name"] == name
    for name in ARGV_ILLEGAL:
        refused = lazy("memory", "save", "-t", "user", "-d", "d", "--body", "b", "--", name)
        assert refused.returncode == 4, name
        assert "lazy: error: invalid name" in refused.stderr
        assert refused.stderr.count("\n") == 1, "one line, the name escaped"

    assert names_in(lazy) == set(LEGAL)


async def test_the_engine_and_the_mcp_tool_take_the_same_names(
    project: Path, tmp_path: Path
) -> None:
    engine = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log", project)
    await engine.initialize()
    for name in LEGAL:
        assert (await engine.result("lazy/memory/save", save_params(name)))["name"] == name
    for name in ILLEGAL:
        refused = await engine.request("lazy/memory/save", save_params(name))
        code = INVALID_RECORD if is_text(name) else INVALID_PARAMS
        assert refused["error"]["code"] == code, (name, refused)
    await engine.close()

    async with mcp_client(project, tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        described = tools["lazy_memory_save"].input_schema["properties"]["name"]
        assert "1-200 printable characters" in described["description"]
        for name in LEGAL:
            changed = {**save_params(name), "body": "from mcp"}
            saved = await client.call_tool("lazy_memory_save", changed)
            assert not saved.is_error, (name, saved)
        for name in filter(is_text, ILLEGAL):
            refused = await client.call_tool("lazy_memory_save", save_params(name))
            assert refused.is_error, name
    done = await asyncio.create_subprocess_exec(
        *LAZY, "memory", "list", "--json", cwd=project, stdout=asyncio.subprocess.PIPE
    )
    listed, _ = await done.communicate()
    records = json.loads(listed)
    assert {record["name"] for record in records} == set(LEGAL)
    assert {record["body"] for record in records} == {"from mcp"}


async def test_a_daemon_storage_peer_is_held_to_the_rule_but_keeps_held_names(
    tmp_path: Path,
) -> None:
    daemon_data = tmp_path / "daemon-data"
    await seed_old_imports(daemon_data, tmp_path, ["held\tname"])
    token = add_token(daemon_data, "engine", name="peer")
    with running_daemon(daemon_data, f"unix:{tmp_path / 'd.sock'}") as daemon:
        reader, writer = await asyncio.open_unix_connection(daemon.address.partition(":")[2])
        peer = RawClient(reader, writer)
        assert "result" in await peer.initialize({"token": token})

        async def save(name: str, if_revision: int | None = None) -> dict[str, Any]:
            content = {"name": name, "type": "project", "description": "d", "body": "b"}
            params = {"content": content, "actor": {"kind": "builder", "detail": "peer"}}
            params |= {"at": "2026-12-01T00:00:00+00:00", "if_revision": if_revision}
            return await peer.request("lazy/storage/save_record", params)

        for name in LEGAL:
            assert "result" in await save(name, if_revision=0), name
        for name in ILLEGAL:
            refused = await save(name)
            code = INVALID_RECORD if is_text(name) else INVALID_PARAMS
            assert refused["error"]["code"] == code, (name, refused)
        held = await save("held\tname", if_revision=1)
        await peer.close()

    assert held["result"]["revision"] == 2


def yaml_quoted(text: str) -> str:
    """text as a YAML double-quoted scalar, every unprintable character an escape."""
    escaped = []
    for character in text:
        if character in '"\\':
            escaped.append("\\" + character)
        elif character.isprintable():
            escaped.append(character)
        elif ord(character) <= 0xFFFF:
            escaped.append(f"\\u{ord(character):04x}")
        else:
            escaped.append(f"\\U{ord(character):08x}")
    return '"' + "".join(escaped) + '"'


def write_harness_file(memory_dir: Path, number: int, name: str) -> None:
    text = f"---\nname: {yaml_quoted(name)}\ndescription: from file {number}\n---\nbody\n"
    (memory_dir / f"n{number}.md").write_text(text, encoding="utf-8")


def test_the_import_keeps_legal_names_and_derives_the_rest_reported(
    lazy: Lazy, memory_dir: Path
) -> None:
    # An empty name falls back to the file's name, and a lone surrogate cannot be in a file.
    illegal = [name for name in ILLEGAL if name and is_text(name)]
    for number, name in enumerate([*LEGAL, *illegal]):
        write_harness_file(memory_dir, number, name)

    preview = lazy("doctor", "--import-memory")
    imported = lazy("doctor", "--import-memory", "--yes")

    assert imported.returncode == 0, imported.stderr
    assert f"Renamed ({len(illegal)})" in preview.stdout
    assert unsafe_characters(preview.stdout) == [], "every name and path escaped"
    expected = set(LEGAL) | {derived_name(name) for name in illegal}
    assert names_in(lazy) == expected
    for name in illegal:
        record = json.loads(lazy("memory", "show", "--json", "--", derived_name(name)).stdout)
        assert record["provenance"]["original_name"] == name


def test_migrate_derives_the_names_an_older_import_stored_and_resumes(
    lazy: Lazy, project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    lazy("memory", "save", "Release checklist", "-t", "user", "-d", "d", "--body", "b")
    asyncio.run(seed_old_imports(isolated_environment, project, [*HELD, *HELD_FORGING]))
    target = tmp_path / "target"

    moved = lazy("memory", "migrate", "--to", "files", "--to-data", str(target))
    again = lazy("memory", "migrate", "--to", "files", "--to-data", str(target))

    assert moved.returncode == 0, moved.stderr
    assert f"{len(HELD) + 2} names break the name rule or are a second" in moved.stdout
    assert unsafe_characters(moved.stdout) == []
    assert "Nothing to copy" in again.stdout, again.stdout + again.stderr
    in_target = {"LAZY_STORAGE": "files", "LAZY_DATA": str(target)}
    derived = {derived_name(name) for name in [*HELD, *HELD_FORGING]}
    assert names_in(lazy, **in_target) == {"Release checklist", *derived}
    shown = lazy("memory", "show", "--json", "--", derived_name("tab\there"), environment=in_target)
    assert json.loads(shown.stdout)["provenance"]["original_name"] == "tab\there"


def test_names_an_older_import_stored_stay_reachable_by_their_exact_name(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    asyncio.run(seed_old_imports(isolated_environment, project, [*HELD, *HELD_FORGING]))

    for name in HELD:
        assert json.loads(lazy("memory", "show", "--json", "--", name).stdout)["name"] == name
        assert lazy("memory", "save", "-d", "edited", "--", name).returncode == 0, name
        assert lazy("memory", "rm", "--", name).returncode == 0, name
        revived = lazy("memory", "save", "-t", "user", "-d", "back", "--body", "b", "--", name)
        assert revived.returncode == 0, (name, revived.stderr)
        history = json.loads(lazy("memory", "history", "--json", "--", name).stdout)
        assert [entry["operation"] for entry in history] == ["import", "save", "rm", "save"]
    # Ones that would break or forge an index line: readable and removable, not saved again.
    for name in HELD_FORGING:
        refused = lazy("memory", "save", "-d", "edited", "--", name)
        assert refused.returncode == 4, name
        assert "so it is not saved again" in refused.stderr
        assert json.loads(lazy("memory", "show", "--json", "--", name).stdout)["name"] == name
        assert lazy("memory", "rm", "--", name).returncode == 0


async def test_every_way_in_finds_a_record_by_any_spelling_of_its_name(
    lazy: Lazy, project: Path, tmp_path: Path
) -> None:
    composed, decomposed = "caf\u00e9 notes", "cafe\u0301 notes"
    created = lazy("memory", "save", decomposed, "-t", "user", "-d", "first", "--body", "b")
    updated = lazy("memory", "save", composed, "-d", "from the command line")
    shown = json.loads(lazy("memory", "show", "--json", composed).stdout)

    assert created.returncode == updated.returncode == 0, updated.stderr
    assert updated.stdout.startswith(f"updated {decomposed} (user), revision 2\n")
    assert "'caf\\xe9 notes' is the same name as the record's own spelling" in updated.stdout
    assert (shown["name"], shown["revision"]) == (decomposed, 2)

    engine = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log", project)
    await engine.initialize()
    saved = await engine.result("lazy/memory/save", {**save_params(composed), "body": "rpc"})
    await engine.close()
    assert (saved["name"], saved["revision"]) == (decomposed, 3)

    async with mcp_client(project, tmp_path) as client:
        saved_by_mcp = await client.call_tool(
            "lazy_memory_save", {**save_params(composed), "body": "mcp"}
        )
        recalled = await client.call_tool("lazy_memory_recall", {"name": composed})
    assert not saved_by_mcp.is_error
    assert not recalled.is_error
    assert "mcp" in str(recalled.content)

    history = json.loads(lazy("memory", "history", "--json", composed).stdout)
    assert [entry["name"] for entry in history] == [decomposed] * 4
    assert lazy("memory", "rm", composed).returncode == 0
    assert names_in(lazy) == set()


def test_migrate_renames_a_second_spelling_an_older_store_holds(
    lazy: Lazy, project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    asyncio.run(seed_old_imports(isolated_environment, project, ["caf\u00e9", "cafe\u0301"]))
    target = tmp_path / "target"

    moved = lazy("memory", "migrate", "--to", "files", "--to-data", str(target))

    assert moved.returncode == 0, moved.stderr
    derived = derived_name("cafe\u0301")
    assert f"  'cafe\\u0301' -> {derived}\n" in moved.stdout
    in_target = {"LAZY_STORAGE": "files", "LAZY_DATA": str(target)}
    assert names_in(lazy, **in_target) == {"caf\u00e9", derived}
