"""Who an editor's engine writes as: the person at the keyboard, exactly as the CLI does.

The editors start `lazy engine` with LAZY_EDITOR set (VS Code's engineLaunch, Neovim's
engine.lua); these tests start it the same way and save through the editor command, then read
the history back through the CLI. Starting one and reading through it creates no store.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.support.jsonrpc import RawClient

SAVE = {"name": "deploy-steps", "type": "project", "description": "How we deploy", "body": "x"}


def engine_environment(**variables: str) -> dict[str, str]:
    """The runner's environment (the autouse fixture's LAZY_DATA included) plus variables."""
    return {**os.environ, **variables}


@asynccontextmanager
async def engine(
    tmp_path: Path, environment: dict[str, str], cwd: Path | None = None
) -> AsyncIterator[RawClient]:
    """A stdio engine, initialized, closed afterwards."""
    client = await RawClient.spawn(["engine"], environment, tmp_path / "engine.log", cwd=cwd)
    try:
        await client.initialize()
        yield client
    finally:
        await client.close()


async def saved_actor(tmp_path: Path, environment: dict[str, str]) -> dict[str, str]:
    """Save through the editor's command, and the history entry's actor for that save."""
    async with engine(tmp_path, environment) as client:
        await client.result(
            "workspace/executeCommand", {"command": "lazy-memory.save", "arguments": [SAVE]}
        )
        history = await client.result("lazy/memory/history", {"name": SAVE["name"]})
    [entry] = history["entries"]
    actor: dict[str, str] = entry["actor"]
    return actor


async def test_an_editors_save_is_the_human_at_the_keyboard(tmp_path: Path) -> None:
    environment = engine_environment(LAZY_EDITOR="vscode", LAZY_ACTOR="some-builder")

    actor = await saved_actor(tmp_path, environment)

    assert actor == {"kind": "human", "detail": getpass.getuser()}


async def test_an_editors_save_is_attributed_as_a_cli_save_is(tmp_path: Path, lazy: Lazy) -> None:
    await saved_actor(tmp_path, engine_environment(LAZY_EDITOR="nvim"))
    saved = lazy("memory", "save", "cli-note", "-t", "user", "-d", "From the CLI", "--body", "b")
    assert saved.returncode == 0, saved.stderr

    history = json.loads(lazy("memory", "history", "--json").stdout)

    assert {
        (entry["name"], entry["actor"]["kind"], entry["actor"]["detail"]) for entry in history
    } == {
        ("deploy-steps", "human", getpass.getuser()),
        ("cli-note", "human", getpass.getuser()),
    }


async def test_an_engine_no_editor_started_is_still_a_builder(tmp_path: Path) -> None:
    actor = await saved_actor(tmp_path, engine_environment(LAZY_ACTOR="orchestrator"))

    assert actor == {"kind": "builder", "detail": "orchestrator"}


async def test_an_editor_inside_an_agents_task_still_may_not_write(tmp_path: Path) -> None:
    environment = engine_environment(LAZY_EDITOR="vscode", LAZY_TASK_ID="task-7")
    async with engine(tmp_path, environment) as client:
        response = await client.request(
            "workspace/executeCommand", {"command": "lazy-memory.save", "arguments": [SAVE]}
        )

    assert response["error"]["data"]["type"] == "PermissionDenied"


async def test_an_editors_engine_in_a_bare_folder_creates_nothing(tmp_path: Path) -> None:
    # What VS Code's activation does: start the engine in the folder and list the records.
    folder = tmp_path / "no-project"
    folder.mkdir()
    environment = {
        key: value
        for key, value in engine_environment(LAZY_EDITOR="vscode").items()
        if key != "LAZY_DATA"
    }
    async with engine(tmp_path, environment, cwd=folder) as client:
        assert await client.result("lazy/memory/recall", {}) == {"records": []}

    assert list(folder.iterdir()) == []
