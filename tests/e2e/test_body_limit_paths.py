"""The body limit on every authoring path, and the import that keeps big bodies (#17).

Real processes: the `lazy` CLI, `lazy engine` spoken to over JSON-RPC (its save method and
the editor's save command), and `lazy mcp` behind the MCP SDK's client. The project's
lazy.toml sets `[memory] max_body_bytes`, except where the 64 KiB default is the point.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from tests.e2e.conftest import Lazy
from tests.support.jsonrpc import RawClient

LIMIT = 1_000
REFUSED = "the body is 1,001 bytes; the limit is 1,000 bytes"
RAISE_IT = "raise [memory] max_body_bytes in lazy.toml"


def limit_project(project: Path, limit: int = LIMIT) -> None:
    (project / "lazy.toml").write_text(f"[memory]\nmax_body_bytes = {limit}\n")


def history(lazy: Lazy) -> list[dict[str, Any]]:
    listed = lazy("memory", "history", "--json")
    assert listed.returncode == 0, listed.stderr
    entries: list[dict[str, Any]] = json.loads(listed.stdout)
    return entries


def test_the_cli_refuses_a_body_over_the_default_64_kib_and_writes_nothing(
    lazy: Lazy, project: Path
) -> None:
    (project / "big.md").write_text("x" * (64 * 1024 + 1))

    refused = lazy("memory", "save", "big", "-t", "user", "-d", "d", "--body-file", "big.md")

    assert refused.returncode == 4
    assert "the body is 65,537 bytes; the limit is 65,536 bytes" in refused.stderr
    assert RAISE_IT in refused.stderr
    assert history(lazy) == []
    taken = lazy(
        "memory", "save", "big", "-t", "user", "-d", "d", "--body-file", "-", input="x" * 64 * 1024
    )
    assert taken.returncode == 0, taken.stderr


def test_the_cli_takes_the_limit_from_lazy_toml_on_creates_and_updates(
    lazy: Lazy, project: Path
) -> None:
    limit_project(project)

    assert (
        lazy("memory", "save", "n", "-t", "user", "-d", "d", "--body", "x" * LIMIT).returncode == 0
    )
    refused = lazy("memory", "save", "n", "--body", "x" * (LIMIT + 1))
    piped = lazy(
        "memory", "save", "m", "-t", "user", "-d", "d", "--body-file", "-", input="é" * 501
    )

    assert (refused.returncode, piped.returncode) == (4, 4)
    assert REFUSED in refused.stderr
    assert "the body is 1,002 bytes" in piped.stderr
    assert [entry["name"] for entry in history(lazy)] == ["n"]


async def test_the_engine_save_and_the_editor_save_command_refuse_it_typed(
    project: Path, tmp_path: Path
) -> None:
    limit_project(project)
    client = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "engine.log", project)
    assert "result" in await client.initialize()
    params = {"name": "big", "type": "user", "description": "d", "body": "x" * (LIMIT + 1)}

    saved = await client.request("lazy/memory/save", params)
    command = await client.request(
        "workspace/executeCommand", {"command": "lazy-memory.save", "arguments": [params]}
    )
    history_now = await client.result("lazy/memory/history", {})
    await client.close()

    for answer in (saved, command):
        assert answer["error"]["code"] == -32011, answer
        assert REFUSED in answer["error"]["message"]
        assert RAISE_IT in answer["error"]["message"]
    assert history_now["entries"] == []


async def test_the_mcp_save_tool_refuses_it_with_an_error_result(
    project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    limit_project(project)
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lazy_memory.rpc.cli", "mcp"],
        env={**os.environ, "LAZY_DATA": str(isolated_environment)},
        cwd=project,
    )
    body = "x" * (LIMIT + 1)
    with anyio.fail_after(60), (tmp_path / "mcp.log").open("a") as errlog:
        async with (
            stdio_client(parameters, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            refused = await client.call_tool(
                "lazy_memory_save",
                {"name": "big", "type": "user", "description": "d", "body": body},
            )
            taken = await client.call_tool(
                "lazy_memory_save", {"name": "ok", "type": "user", "description": "d", "body": "x"}
            )

    assert refused.is_error
    [block] = refused.content
    assert isinstance(block, TextContent)
    assert REFUSED in block.text
    assert not taken.is_error


def test_an_import_keeps_a_body_over_the_limit_verbatim_and_reports_it(
    project: Path, tmp_path: Path
) -> None:
    limit_project(project)
    claude = tmp_path / "claude-config"
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve()))
    memory = claude / "projects" / slug / "memory"
    memory.mkdir(parents=True)
    body = "# Runbook\n\n" + "step and more steps\n" * 300  # 5,711 bytes
    (memory / "runbook.md").write_text(f"---\nname: runbook\ndescription: The runbook\n---\n{body}")
    (memory / "small.md").write_text("---\nname: small\ndescription: Small\n---\nshort\n")
    environment = {**os.environ, "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(claude)}

    def lazy(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
            cwd=project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
        )

    preview = lazy("doctor", "--import-memory", "--json")
    imported = lazy("doctor", "--import-memory", "--yes")
    shown = lazy("memory", "show", "runbook", "--raw")

    assert json.loads(preview.stdout)["large_bodies"] == ["runbook"]
    assert imported.returncode == 0, imported.stderr
    assert "Imported 2 records," in imported.stdout
    note = imported.stdout.split("\nNote: ")[-1]
    assert note.startswith("1 record has a body over 1,000 bytes ([memory] max_body_bytes)")
    assert note.endswith(":\n  runbook\n")
    assert shown.stdout == body
    # Its description can still be edited; a save that rewrites the body must fit the limit.
    assert lazy("memory", "save", "runbook", "-d", "The whole runbook").returncode == 0
    assert lazy("memory", "save", "runbook", "--body", body + "!").returncode == 4
