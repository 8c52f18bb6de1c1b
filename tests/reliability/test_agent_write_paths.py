"""An agent writes nothing through any way in, whatever its task id (issue #17, part 1).

The ways in are listed in write_paths.py and held to what the code offers (the parser's tree,
the method tables, the editor's commands, what the engine advertises, the MCP server's tools),
so a new one fails here until it is listed. Each is run as an agent, LAZY_TASK_ID set to ""
and to "t-1" (on the daemon: agent tokens, one with a task, two edited by hand to have an
empty one or none): every write is refused with PermissionDenied (exit 6, JSON-RPC -32013, an
MCP error result) and afterwards every entry under the test's folder (the project root, the
data directory, HOME, the harness's memory, a migration's target) has the same kind, mode
and bytes, and no entry came or went. The same writes made by a builder do write, so the
arguments are real writes.

One file may come or change for a command that is not refused: the section the SessionStart
hook keeps for the next launch of an agent (`launch-cache-agent.json`, adapters/launch/cache.py),
derived data and no record, the launch's own cache (tests/e2e/test_launch_cache.py). An agent
does not even log its launch.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent

from lazy_memory.adapters.tokens import TokenStore
from lazy_memory.engine.identity import agent_name
from lazy_memory.rpc.cli import build_parser
from lazy_memory.rpc.editor.features import COMMANDS
from lazy_memory.rpc.jsonrpc.methods import METHODS
from lazy_memory.rpc.jsonrpc.storage_methods import STORAGE_METHODS
from tests.reliability.boundary_scene import Scene, changes, lazy, store_state
from tests.reliability.engines import SpawnEngine
from tests.reliability.figures import Figures
from tests.reliability.live_engine import LiveMcp
from tests.reliability.write_paths import (
    CLI_ELSEWHERE,
    CLI_READS,
    CLI_REFUSED,
    CLI_WRITES,
    COMMAND_READS,
    COMMAND_WRITES,
    MCP_READS,
    MCP_WRITES,
    PERMISSION_DENIED,
    READS,
    SEEDED,
    WRITES,
    advertised,
    call,
    cli_argv,
    cli_commands,
    connect,
    error_code,
    every_call,
    writes,
)
from tests.support.daemon import add_token, running_daemon
from tests.support.jsonrpc import RawClient

HEADING = "agent write paths"
HOOK = ["memory", "context", "--hook"]
KEPT_BY_AN_AGENT = "launch-cache-agent.json"
"""The one file an agent's command may leave behind: the hook's section, kept for the next."""
TASK_IDS = ["", "t-1"]
"""LAZY_TASK_ID as an agent's environment sets it: empty, and a real task."""


@pytest.fixture
def socket_directory() -> Iterator[Path]:
    """A short folder for unix sockets (their paths are limited to about 100 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="lza-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def placeholders(scene: Scene, socket_directory: Path) -> dict[str, str]:
    """What cli_argv fills in: a migration's target, a token's id, a socket, a stand-in claude."""
    true = shutil.which("true")
    assert true is not None
    return {
        "target": str(scene.outside / "migrated"),
        "token": scene.token_id,
        "socket": str(socket_directory / "s"),
        "true": true,
    }


# Every way in is listed.


def test_every_way_in_is_listed_as_a_write_or_a_read() -> None:
    methods = {*METHODS, *STORAGE_METHODS}
    assert not set(WRITES) & set(READS)
    assert methods - {*WRITES, *READS} == set(), "a new method: list it in write_paths"
    assert {*WRITES, *READS} - methods == set(), "a listed method the tables no longer have"
    assert set(COMMANDS) == {*COMMAND_WRITES, *COMMAND_READS}, "a new editor command: list it"

    parser = build_parser()
    leaves = cli_commands(parser)
    listed = {*CLI_WRITES, *CLI_REFUSED, *CLI_READS, *CLI_ELSEWHERE}
    assert leaves - listed == set(), "a new CLI command: list it in write_paths.CLI_*"
    assert listed - leaves == set(), "a listed CLI command the parser no longer has"
    # Each listed command line is one the parser takes, for the command it is listed under.
    values = {"target": "t", "token": "tok_0", "socket": "s", "true": "true"}
    for table in (CLI_WRITES, CLI_REFUSED, CLI_READS):
        for leaf, runs in table.items():
            for arguments in runs:
                assert tuple(arguments[: len(leaf)]) == leaf, (leaf, arguments)
                parser.parse_args(cli_argv(arguments, values))


# The CLI.


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_an_agent_writes_nothing_through_any_cli_command(
    scene: Scene, socket_directory: Path, task_id: str, figures: Figures
) -> None:
    values = placeholders(scene, socket_directory)
    # The launcher's prompt file goes to TMPDIR: inside the folder checked, so it must go.
    (scene.root / "tmp").mkdir()
    agent = {"LAZY_TASK_ID": task_id, "TMPDIR": str(scene.root / "tmp")}
    tables = {"refused": (CLI_WRITES, CLI_REFUSED), "read": (CLI_READS,)}
    runs = [
        (outcome, cli_argv(arguments, values))
        for outcome, chosen in tables.items()
        for table in chosen
        for listed in table.values()
        for arguments in listed
    ]
    for outcome, arguments in runs:
        before = scene.files()
        done = lazy(*arguments, **agent)
        after = scene.files()
        if outcome == "refused":
            assert done.returncode == 6, (arguments, done.stderr)
            assert done.stderr.count("\n") == 1, (arguments, done.stderr)
            assert "agents are read-only" in done.stderr, (arguments, done.stderr)
            assert agent_name(task_id) in done.stderr, (arguments, done.stderr)
        else:
            assert done.returncode == 0, (arguments, done.stderr)
        if arguments == HOOK:
            kept = str((scene.data_dir / KEPT_BY_AN_AGENT).relative_to(scene.root))
            before, after = ({p: v for p, v in t.items() if p != kept} for t in (before, after))
        # The launch hook and the launcher included: an agent does not even log its launch.
        assert after == before, (arguments, changes(before, after))
    assert list(socket_directory.iterdir()) == []
    figures.add(HEADING, f"CLI, LAZY_TASK_ID={task_id!r}: {len(runs)} commands, 0 bytes written")


def test_each_listed_cli_write_writes_for_a_person(scene: Scene, socket_directory: Path) -> None:
    values = placeholders(scene, socket_directory)
    for listed in CLI_WRITES.values():
        for arguments in listed:
            before = scene.files()
            done = lazy(*cli_argv(arguments, values))
            assert done.returncode == 0, (arguments, done.stderr)
            assert scene.files() != before, f"lazy {' '.join(arguments)} wrote nothing"


# The engine's methods and editor commands, over stdio and through the daemon.


async def check_agent_writes_nothing(
    agent: RawClient, initialized: dict[str, Any], name: str, *, storage_reads: bool = False
) -> int:
    """Call every method and command as the agent named name; the number of calls made.

    With storage_reads (an agent token on the daemon) the storage methods that only read
    answer, for the agent's own processes on the remote backend; the others are refused.
    """
    assert "result" in initialized, initialized
    assert advertised(initialized) == {*COMMAND_WRITES, *COMMAND_READS}, (
        "a new command: list it in write_paths.COMMAND_WRITES or COMMAND_READS"
    )
    calls = every_call()
    for method, params in calls:
        answer = await call(agent, method, params)
        if writes(method) or (method in STORAGE_METHODS and not storage_reads):
            assert error_code(answer) == PERMISSION_DENIED, (method, params, answer)
            assert answer["error"]["data"] == {"type": "PermissionDenied"}
            if method not in STORAGE_METHODS:
                assert name in answer["error"]["message"], answer
        else:
            assert "result" in answer, (method, params, answer)
    return len(calls)


async def check_each_write_writes(
    client: RawClient, data_dir: Path, only: Callable[[str], bool]
) -> None:
    """Each listed write, made by a session that may write, changes the store."""
    for method, params in every_call():
        if not (writes(method) and only(method)):
            continue
        before = await store_state(data_dir)
        answer = await call(client, method, params)
        assert "result" in answer, (method, params, answer)
        assert await store_state(data_dir) != before, f"{method} {params} wrote nothing"


@pytest.mark.parametrize("task_id", TASK_IDS)
async def test_an_agent_engine_writes_nothing_through_any_method_or_command(
    scene: Scene, spawn_engine: SpawnEngine, task_id: str, figures: Figures
) -> None:
    before = scene.files()
    agent = await spawn_engine({**os.environ, "LAZY_TASK_ID": task_id}, scene.logs / "agent.log")
    calls = await check_agent_writes_nothing(agent, await agent.initialize(), agent_name(task_id))
    assert await agent.close() == 0
    after = scene.files()
    assert after == before, changes(before, after)
    figures.add(HEADING, f"stdio engine, LAZY_TASK_ID={task_id!r}: {calls} calls, 0 bytes")


async def test_each_listed_engine_write_writes_for_a_builder(
    scene: Scene, spawn_engine: SpawnEngine
) -> None:
    builder = await spawn_engine({**os.environ, "LAZY_ACTOR": "b1"}, scene.logs / "builder.log")
    await builder.initialize()
    # Over stdio nobody has the storage methods: an engine token's are checked on the daemon.
    await check_each_write_writes(builder, scene.data_dir, lambda m: m not in STORAGE_METHODS)
    assert await builder.close() == 0


def hand_edited_agent_token(data_dir: Path, task: str | None) -> str:
    """A token turned into an agent's by editing the token file, with this task (or none).

    `token add` refuses an agent token without a task id; a file edited by hand is not held
    to that, and the daemon must still treat its holder as an agent.
    """
    store = TokenStore.in_data_dir(data_dir)
    token, secret = store.add("builder", "edited-by-hand")
    content = json.loads(store.path.read_text(encoding="utf-8"))
    for entry in content["tokens"]:
        if entry["id"] == token.id:
            entry.update(role="agent", task=task)
    store.path.write_text(json.dumps(content), encoding="utf-8")
    return secret


@pytest.mark.parametrize("task", ["t-1", "", None])
async def test_an_agent_token_writes_nothing_through_the_daemon(
    scene: Scene, socket_directory: Path, task: str | None, figures: Figures
) -> None:
    if task:
        secret = add_token(scene.data_dir, "agent", "helper", task=task)
    else:
        secret = hand_edited_agent_token(scene.data_dir, task)
    before = scene.files()
    with running_daemon(scene.data_dir, f"unix:{socket_directory / 's'}") as daemon:
        agent = await connect(daemon)
        initialized = await agent.initialize({"token": secret})
        calls = await check_agent_writes_nothing(
            agent, initialized, agent_name(task or ""), storage_reads=True
        )
        await agent.close()
        while_serving = scene.files()
        assert daemon.stop() == 0
    assert while_serving == before, changes(before, while_serving)
    after = scene.files()
    assert after == before, changes(before, after)
    figures.add(HEADING, f"daemon, agent token with task {task!r}: {calls} calls, 0 bytes")


REMOTE_STORE_WRITES = {
    leaf: CLI_WRITES[leaf]
    for leaf in (("memory", "save"), ("memory", "rm"), ("memory", "compact"), ("doctor",))
}
"""The CLI writes that go to the store itself; the others write the agent's own files
(its lazy.toml, its local token file, a local copy of the store), not the daemon's."""


@pytest.mark.parametrize(
    "environment",
    [{"LAZY_TASK_ID": "t-1"}, {"LAZY_ACTOR": "builder"}],
    ids=["with-its-task-id", "posing-as-a-builder"],
)
def test_an_agent_token_is_read_only_on_the_remote_backend_whatever_the_environment_says(
    scene: Scene, socket_directory: Path, environment: dict[str, str], figures: Figures
) -> None:
    # The hard boundary: an agent that drops its task id (or claims to be a builder) still
    # holds only an agent token, and the daemon refuses its writes.
    secret = add_token(scene.data_dir, "agent", "helper", task="t-1")
    with running_daemon(scene.data_dir, f"unix:{socket_directory / 's'}") as daemon:
        agent = {
            **environment,
            "LAZY_STORAGE": "remote",
            "LAZY_REMOTE": daemon.address,
            "LAZY_TOKEN": secret,
            "LAZY_DATA": str(scene.root / "agent-data"),
        }
        before = scene.files()
        read = lazy("memory", "list", "--json", **agent)
        assert read.returncode == 0, read.stderr
        assert len(json.loads(read.stdout)) == len(SEEDED)
        runs = [arguments for listed in REMOTE_STORE_WRITES.values() for arguments in listed]
        for arguments in runs:
            done = lazy(*arguments, **agent)
            assert done.returncode == 6, (arguments, done.stderr)
            assert "read-only" in done.stderr, (arguments, done.stderr)
        server = LiveMcp({**os.environ, **agent}, scene.logs / "mcp.log", cwd=scene.project)
        try:
            for tool, listed_calls in MCP_WRITES.items():
                for call_arguments in listed_calls:
                    result = server.call(calling(tool, call_arguments))
                    assert result.is_error, (tool, text_of(result))
                    assert "read-only" in text_of(result)
            recalled = server.call(calling("lazy_memory_recall", {}))
            assert not recalled.is_error, text_of(recalled)
        finally:
            server.close()
        after = scene.files()
        assert daemon.stop() == 0
    assert after == before, changes(before, after)
    figures.add(
        HEADING,
        f"remote backend, agent token, {environment}: {len(runs)} CLI writes and "
        f"{len(MCP_WRITES)} MCP write refused, 0 bytes",
    )


async def test_builder_and_engine_tokens_write_through_the_daemon(
    scene: Scene, socket_directory: Path
) -> None:
    builder_token = add_token(scene.data_dir, "builder", "b2")
    engine_token = add_token(scene.data_dir, "engine", "laptop")
    with running_daemon(scene.data_dir, f"unix:{socket_directory / 's'}") as daemon:
        builder = await connect(daemon)
        await builder.initialize({"token": builder_token})
        await check_each_write_writes(builder, scene.data_dir, lambda m: m not in STORAGE_METHODS)
        engine = await connect(daemon)
        await engine.initialize({"token": engine_token})
        await check_each_write_writes(engine, scene.data_dir, lambda m: m in STORAGE_METHODS)
        for client in (builder, engine):
            await client.close()
        assert daemon.stop() == 0


# The MCP tools.


def calling(
    tool: str, arguments: dict[str, Any]
) -> Callable[[ClientSession], Awaitable[CallToolResult]]:
    """A call of tool with arguments, for LiveMcp.call to run."""

    async def run(session: ClientSession) -> CallToolResult:
        return await session.call_tool(tool, arguments)

    return run


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's one block."""
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_an_agent_writes_nothing_through_any_mcp_tool(
    scene: Scene, task_id: str, figures: Figures
) -> None:
    before = scene.files()
    environment = {**os.environ, "LAZY_TASK_ID": task_id}
    server = LiveMcp(environment, scene.logs / "mcp.log", cwd=scene.project)
    calls = 0
    try:
        tools = server.call(lambda session: session.list_tools())
        assert {tool.name for tool in tools.tools} == {*MCP_WRITES, *MCP_READS}, (
            "a new MCP tool: list it in write_paths.MCP_WRITES or MCP_READS"
        )
        for table, refused in ((MCP_WRITES, True), (MCP_READS, False)):
            for tool, listed in table.items():
                for arguments in listed:
                    calls += 1
                    result = server.call(calling(tool, arguments))
                    assert result.is_error is refused, (tool, arguments, result)
                    if refused:
                        assert agent_name(task_id) in text_of(result), text_of(result)
    finally:
        server.close()
    after = scene.files()
    assert after == before, changes(before, after)
    figures.add(HEADING, f"MCP, LAZY_TASK_ID={task_id!r}: {calls} tool calls, 0 bytes written")


def test_each_listed_mcp_write_writes_for_a_builder(scene: Scene) -> None:
    server = LiveMcp({**os.environ, "LAZY_ACTOR": "b1"}, scene.logs / "mcp.log", cwd=scene.project)
    try:
        for tool, listed in MCP_WRITES.items():
            for arguments in listed:
                before = scene.state()
                result = server.call(calling(tool, arguments))
                assert not result.is_error, text_of(result)
                assert scene.state() != before, f"{tool} {arguments} wrote nothing"
    finally:
        server.close()
