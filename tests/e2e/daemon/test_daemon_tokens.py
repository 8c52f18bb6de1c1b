"""`lazy engine --listen` and its tokens, over raw clients: a connection without a valid token
is refused then closed, a revoked token is refused from the next connection on, an agent's
token reads but writes nothing; and `lazy engine token` keeps digests only, shows no secret.
"""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.daemon.raw_daemon import StartDaemon, add_token, lazy, save_params

TOKEN_REQUIRED = "a valid token is required: pass initializationOptions.token"


@pytest.mark.parametrize(
    "options",
    [None, {}, {"token": None}, {"token": "lzm_not-a-real-token"}, {"token": 42}, "a token"],
    ids=["no-options", "no-token", "null", "wrong", "number", "not-an-object"],
)
async def test_a_connection_without_a_valid_token_is_refused_then_closed(
    start_daemon: StartDaemon, socket_directory: Path, options: Any
) -> None:
    add_token("builder")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    client = await daemon.connect()

    early = await client.request("lazy/memory/save", save_params("sneaky"))
    refused = await client.initialize(options)

    assert early["error"]["code"] == -32002
    assert refused["error"] == {
        "code": -32013,
        "message": TOKEN_REQUIRED,
        "data": {"type": "PermissionDenied"},
    }
    assert await client.closed_by_peer()
    assert "refused" in daemon.logged()
    assert lazy("memory", "history", "--json").stdout.strip() == "[]"


async def test_a_revoked_token_is_refused_from_the_next_connection_on(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    token = add_token("builder", "--name", "soon-gone")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    open_before = await daemon.client(token)

    revoked = lazy("engine", "token", "revoke", token.id)
    assert revoked.returncode == 0, revoked.stderr
    assert token.id in revoked.stdout

    refused = await (await daemon.connect()).initialize({"token": token.secret})
    assert refused["error"]["code"] == -32013
    assert refused["error"]["data"] == {"type": "PermissionDenied"}
    # Revoking gates new connections; one already open runs until it closes.
    assert (await open_before.result("lazy/memory/save", save_params("still-open")))["revision"]
    assert lazy("engine", "token", "revoke", token.id).returncode == 3


async def test_an_agent_token_reads_but_every_write_is_refused(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    builder = add_token("builder", "--name", "b1")
    agent_token = add_token("agent", "--task", "t1")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    writer = await daemon.client(builder)
    await writer.result("lazy/memory/save", save_params("deploy"))
    agent = await daemon.client(agent_token)

    saved = await agent.request("lazy/memory/save", save_params("agent-note"))
    removed = await agent.request("lazy/memory/rm", {"name": "deploy"})

    for refused in (saved, removed):
        assert refused["error"]["code"] == -32013
        assert refused["error"]["data"] == {"type": "PermissionDenied"}
        assert "t1" in refused["error"]["message"]
    assert (await agent.result("lazy/memory/recall", {"name": "deploy"}))["record"]
    assert len((await agent.result("lazy/memory/history"))["entries"]) == 1


def test_tokens_are_private_and_no_listing_shows_a_secret(isolated_environment: Path) -> None:
    human = add_token("human", "--name", "Alice Example")
    agent = add_token("agent", "--name", "helper", "--task", "t1")
    token_file = isolated_environment / "tokens.json"

    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    stored = token_file.read_text(encoding="utf-8")
    for token in (human, agent):
        assert token.secret not in stored
        assert hashlib.sha256(token.secret.encode()).hexdigest() in stored

    listed = lazy("engine", "token", "list", "--json")
    assert listed.returncode == 0
    assert [(t["id"], t["role"], t["name"], t["task"]) for t in json.loads(listed.stdout)] == [
        (human.id, "human", "Alice Example", None),
        (agent.id, "agent", "helper", "t1"),
    ]
    table = lazy("engine", "token", "list")
    for output in (listed.stdout, table.stdout):
        assert "lzm_" not in output
        assert "digest" not in output
    assert human.id in table.stdout

    assert lazy("engine", "token", "revoke", human.id).returncode == 0
    assert [t["id"] for t in json.loads(lazy("engine", "token", "list", "--json").stdout)] == [
        agent.id
    ]
    refused = lazy("engine", "token", "add", "--role", "agent")
    assert (refused.returncode, refused.stderr.count("\n")) == (4, 1)


def test_token_commands_never_import_pygls() -> None:
    finished = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lazy_memory.rpc.cli",
            "engine",
            "token",
            "list",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    imported = {line.split("|")[-1].strip() for line in finished.stderr.splitlines()}
    assert "lazy_memory.rpc.cli.engine" in imported
    assert not {name for name in imported if name.split(".")[0] in ("pygls", "lsprotocol")}
