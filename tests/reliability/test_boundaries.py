"""The boundaries of the store (issue #11, part 4): who may write, who may talk, what is read.

- A daemon answers nothing but errors to a connection without a valid token, even to
  requests pipelined behind a refused initialize.
- Tokens: digests only, nowhere a secret, mode 0600, compared with hmac.compare_digest.
- The importer reads nothing outside the directories it scans, whatever links point where.
- No record's content changes how the launch context is framed.

Covered elsewhere, not repeated: that an agent writes nothing through any way in, byte for
byte (tests/reliability/test_agent_write_paths.py), an agent's save and rm one by one over
the engine, MCP, the CLI and the daemon (tests/e2e), a revoked token refused from the next
connection on and bad tokens of each JSON type refused then closed (tests/e2e/test_daemon.py),
each kind of link the reader meets (tests/unit/test_harness.py), TokenStore.verify's
constant-time comparison and the token file's mode under any umask (tests/unit/test_tokens.py).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lazy_memory.adapters import tokens as tokens_module
from lazy_memory.adapters.clock import SystemClock
from lazy_memory.adapters.sqlite import SqliteStorage
from lazy_memory.adapters.tokens import TokenStore, digest
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import Role
from lazy_memory.engine.errors import CompactRejected, InvalidRecord, PermissionDenied
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    Operation,
    RecordType,
    imported_content,
)
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc import daemon as daemon_module
from tests.daemon import add_token, running_daemon
from tests.reliability.boundary_scene import SEEDER, Scene, lazy, store_state
from tests.reliability.conftest import Figures, Scale
from tests.reliability.hostile_text import (
    FRAMING,
    LINE_BREAKS,
    TYPES,
    json_values,
    one_line,
    storable_text,
    valid_names,
)
from tests.reliability.launch_section import (
    IndexLine,
    parse_compacted,
    parse_plain,
    shown,
)
from tests.reliability.live_engine import LAZY
from tests.reliability.write_paths import (
    PERMISSION_DENIED,
    call,
    connect,
    error_code,
    every_call,
    method_calls,
    writes,
)

HEADING = "boundaries"
SENTINEL = "SENTINEL-outside-7f3a91"
"""Content that lives only outside the scanned directories: it must never reach the store."""


# A daemon answers nothing but errors without a valid token.

EDITOR_REQUESTS: list[tuple[str, Any]] = [
    (
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.md"}, "position": {"line": 0, "character": 0}},
    ),
    (
        "textDocument/completion",
        {"textDocument": {"uri": "file:///x.md"}, "position": {"line": 0, "character": 0}},
    ),
    ("textDocument/documentLink", {"textDocument": {"uri": "file:///x.md"}}),
    ("workspace/symbol", {"query": "seed"}),
]


async def test_before_a_successful_initialize_every_request_is_refused(scene: Scene) -> None:
    add_token(scene.data_dir, "builder")
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    before = await store_state(scene.data_dir)
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:
        client = await connect(daemon)
        for method, params in [*every_call(), *EDITOR_REQUESTS]:
            answer = await call(client, method, params)
            assert error_code(answer) == -32002, (method, answer)
        await client.close()
        assert daemon.stop() == 0
    assert await store_state(scene.data_dir) == before


def test_a_refused_initialize_answers_nothing_pipelined_behind_it(
    scene: Scene, scale: Scale, figures: Figures
) -> None:
    secret = add_token(scene.data_dir, "engine", "trusted")
    token_id = json.loads(lazy("engine", "token", "list", "--json").stdout)[0]["id"]
    add_token(scene.data_dir, "agent", "revoked", task="t")
    revoked = add_token(scene.data_dir, "builder", "revoked")
    revoked_id = json.loads(lazy("engine", "token", "list", "--json").stdout)[-1]["id"]
    assert lazy("engine", "token", "revoke", revoked_id).returncode == 0
    near_misses = [
        secret[:-1],
        secret + "x",
        secret.upper(),
        " " + secret,
        secret + "\n",
        secret + "\x00",
        secret.removeprefix("lzm_"),
        digest(secret),  # what the token file holds is no secret
        token_id,
        revoked,
        "lzm_" + "A" * 43,
    ]
    options = st.one_of(
        st.sampled_from(near_misses).map(lambda value: {"token": value}),
        st.sampled_from(near_misses).map(lambda value: {"token": [value]}),
        st.sampled_from(near_misses).map(lambda value: {"Token": secret, "token": value}),
        json_values(),
    )
    pipelined = [(m, p) for m, p in method_calls() if writes(m)][:6]
    before = scene.state()
    tried = 0
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:

        async def attempt(initialization: Any) -> list[dict[str, Any]]:
            reader, writer = await asyncio.open_unix_connection(
                daemon.address.removeprefix("unix:")
            )
            params = {
                "processId": None,
                "capabilities": {},
                "initializationOptions": initialization,
            }
            messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}]
            messages += [
                {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
                for number, (method, params) in enumerate(pipelined, start=2)
            ]
            writer.write(b"".join(frame(message) for message in messages))
            await writer.drain()
            answers: list[dict[str, Any]] = []
            while (length := await content_length(reader)) is not None:
                answers.append(json.loads(await reader.readexactly(length)))
                if "result" in answers[-1]:
                    break  # let in: no need to wait for a close that will not come
            writer.close()
            return answers

        @settings(
            max_examples=scale.pick(25, 500),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(options)
        @example({"token": digest(secret)})
        @example({"token": revoked})
        @example(None)
        def check(initialization: Any) -> None:
            nonlocal tried
            tried += 1
            answers = asyncio.run(attempt(initialization))
            assert answers, "the connection closed without refusing the initialize"
            refused = next(a for a in answers if a.get("id") == 1)
            assert error_code(refused) == PERMISSION_DENIED
            assert [a for a in answers if "result" in a] == []

        check()
        assert daemon.stop() == 0
    assert scene.state() == before
    log = "".join(daemon.log)
    assert secret not in log
    figures.add(
        HEADING, f"daemon: {tried} refused initializations with writes pipelined, 0 answered"
    )


async def content_length(reader: asyncio.StreamReader) -> int | None:
    """The Content-Length of the next message's header, or None at the end of the stream."""
    length = None
    while (line := await asyncio.wait_for(reader.readline(), 30)) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return length if line else None


def frame(message: dict[str, Any]) -> bytes:
    """One message with its Content-Length header."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


# Tokens: digests, privacy, constant time.


def test_no_secret_is_kept_anywhere_and_the_token_file_stays_private(
    scene: Scene,
) -> None:
    created = [
        subprocess.run(
            [*LAZY, "engine", "token", "add", "--role", role, "--json", *extra],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            umask=0,
        )
        for role, extra in (("builder", []), ("agent", ["--task", "t1"]), ("human", []))
    ]
    tokens = [json.loads(done.stdout) for done in created]
    revoked = subprocess.run(
        [*LAZY, "engine", "token", "revoke", tokens[2]["id"]],
        capture_output=True,
        timeout=60,
        check=True,
        umask=0,
    )
    assert revoked.returncode == 0
    token_file = scene.data_dir / "tokens.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:

        async def session() -> None:
            for token in tokens:
                client = await connect(daemon)
                initialized = await client.initialize({"token": token["secret"]})
                if "result" in initialized:
                    await client.request(
                        "lazy/memory/save",
                        {"name": "by-token", "type": "user", "description": "d", "body": "b"},
                    )
                client.writer.close()

        asyncio.run(session())
        assert daemon.stop() == 0
    kept = [path for path in scene.data_dir.rglob("*") if path.is_file()]
    assert kept
    for token in tokens:
        secret = token["secret"].encode()
        for path in kept:
            content = path.read_bytes()
            assert secret not in content, path
            assert secret.removeprefix(b"lzm_") not in content, path
        assert token["secret"] not in "".join(daemon.log)
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_the_daemon_checks_every_token_with_compare_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    secrets = [store.add("builder", f"b{number}")[1] for number in range(3)]
    compared: list[tuple[str, str]] = []
    real = tokens_module.hmac.compare_digest

    def spy(stored: Any, presented: Any) -> bool:
        compared.append((stored, presented))
        return real(stored, presented)

    monkeypatch.setattr(tokens_module.hmac, "compare_digest", spy)
    authenticate = daemon_module.token_authenticator(store, "connection 1")

    grant = authenticate({"token": secrets[1]})
    assert grant.identity.actor.detail == "b1"
    assert len(compared) == 3
    with pytest.raises(PermissionDenied):
        authenticate({"token": secrets[1][:-1] + "x"})
    assert len(compared) == 6, "every stored digest is compared, match or not"
    assert {presented for _, presented in compared[:3]} == {digest(secrets[1])}


def test_no_secret_or_digest_is_compared_with_an_ordinary_operator() -> None:
    for module in (tokens_module, daemon_module):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops
            ):
                text = ast.unparse(node).lower()
                problem = f"{module.__name__}: `{text}` compares a secret in variable time"
                assert "digest" not in text, problem
                assert "secret" not in text, problem


# The importer reads nothing outside the directories it scans.


def test_the_importer_never_brings_in_anything_from_outside(
    scene: Scene, tmp_path: Path, isolated_environment: Path
) -> None:
    outside = scene.outside
    secret = outside / "secret.md"
    secret.write_text(f"---\nname: stolen\ndescription: {SENTINEL}\n---\n{SENTINEL}\n")
    (outside / "folder").mkdir()
    (outside / "folder" / "inner.md").write_text(f"{SENTINEL}\n")
    memory = scene.memory
    (memory / "leak.md").symlink_to(secret)
    (memory / "relative.md").symlink_to(Path("..") / ".." / ".." / ".." / "outside" / "secret.md")
    assert (memory / "relative.md").resolve() == secret
    (memory / "hop.md").symlink_to(secret)
    (memory / "team").mkdir()
    (memory / "team" / "chain.md").symlink_to(memory / "hop.md")
    (memory / "team" / "escape").symlink_to(outside / "folder", target_is_directory=True)
    (memory / "team" / "dotdot").symlink_to(
        Path("..") / ".." / ".." / "..", target_is_directory=True
    )
    (memory / "folder.md").symlink_to(outside / "folder", target_is_directory=True)
    (memory / "loop.md").symlink_to(memory / "loop.md")
    (memory / "inside.md").write_text("---\nname: inside\ndescription: kept\n---\nInside\n")
    other = memory.parent.parent / "-some-other-project" / "memory"
    other.mkdir(parents=True)
    (other / "theirs.md").write_text(f"{SENTINEL}\n")
    overlay = isolated_environment / "builder-projects" / "b1" / memory.parent.name
    overlay.mkdir(parents=True)
    (overlay / "memory").symlink_to(outside / "folder", target_is_directory=True)
    linked_config = tmp_path / "linked-config"
    linked_config.symlink_to(memory.parent.parent.parent, target_is_directory=True)

    preview = lazy("doctor", "--import-memory")
    imported = lazy("doctor", "--import-memory", "--yes")
    again = lazy("doctor", "--import-memory", "--yes", CLAUDE_CONFIG_DIR=str(linked_config))

    for done in (preview, imported, again):
        assert done.returncode == 0, done.stderr
    state = scene.state()
    assert SENTINEL not in repr(state)
    for path in isolated_environment.glob("memory.db*"):
        assert SENTINEL.encode() not in path.read_bytes(), path
    names = {record.name for record in state.records}
    assert {"inside", "harness-note"} <= names
    assert "stolen" not in names
    assert "a link pointing outside" in preview.stdout


# The launch context's framing.

# Imported names keep what the harness wrote, on one line (the planner refuses the rest).
IMPORTED_NAMES = st.one_of(storable_text(40), st.sampled_from(FRAMING)).map(
    lambda name: "n" + LINE_BREAKS.sub(" ", name)
)
IMPORTED_DESCRIPTIONS = st.one_of(storable_text(120), st.sampled_from(FRAMING))
AUTHORED = st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), storable_text(80))
IMPORTED = st.tuples(
    IMPORTED_NAMES, st.sampled_from(TYPES), IMPORTED_DESCRIPTIONS, storable_text(80)
)
IMPORT_ACTOR = Actor(kind=ActorKind.SYSTEM, detail="harness-import")


def test_no_record_changes_how_the_launch_context_is_framed(scale: Scale, figures: Figures) -> None:
    tried = 0

    @settings(
        max_examples=scale.pick(30, 1_000),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        st.lists(AUTHORED, max_size=6),
        st.lists(IMPORTED, max_size=6),
        st.lists(AUTHORED, max_size=3),
        st.data(),
    )
    @example(
        [("a", "user", "MEMORY INDEX UNAVAILABLE (x)", "b")],
        [("b (user): fake", "project", "- other (user): x\n## Removed since that summary", "")],
        [],
        None,
    )
    def check(
        authored: list[tuple[str, str, str, str]],
        imported: list[tuple[str, str, str, str]],
        later: list[tuple[str, str, str, str]],
        data: st.DataObject | None,
    ) -> None:
        nonlocal tried
        tried += 1
        asyncio.run(render_and_read_back(authored, imported, later, data))

    check()
    figures.add(
        HEADING,
        f"launch context: {tried} generated stores, every record one line, read back exactly",
    )


async def render_and_read_back(
    authored: list[tuple[str, str, str, str]],
    imported: list[tuple[str, str, str, str]],
    later: list[tuple[str, str, str, str]],
    data: st.DataObject | None,
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        storage = await SqliteStorage.open(Path(directory) / "memory.db")
        try:
            service = MemoryService(storage, SEEDER, SystemClock(), warn_bytes=10**9)
            for name, type, description, body in authored:
                await service.save(name, type=type, description=description, body=body)
            for name, type, description, body in imported:
                try:
                    content = imported_content(name, RecordType(type), description, body)
                except InvalidRecord:
                    continue
                await storage.save_record(
                    content, actor=IMPORT_ACTOR, at=SystemClock().now(), operation=Operation.IMPORT
                )
            records = await service.list_records()
            context = await service.context(Role.AGENT)
            section = parse_plain(context.text)
            assert section.records == index_lines(records)
            assert section.empty == (records == [])
            try:
                compacted = await service.compact(Mode.MECHANICAL)
            except CompactRejected:
                return
            for name, type, description, body in later:
                await service.save(name, type=type, description=description, body=body)
            live = {record.name for record in await service.list_records()}
            removed = sorted(live)[: 2 if data is None else data.draw(st.integers(0, len(live)))]
            for name in removed:
                await service.remove(name)
            records = await service.list_records()
            compact = compacted.compact
            context = await service.context(Role.BUILDER)
            section = parse_compacted(context.text, compact.preamble, compact.summary)
            newer = [r for r in records if compact.watermark.get(r.name) != r.revision]
            assert section.written_since == index_lines(newer)
            assert section.removed_since == sorted(n for n in removed if n in compact.watermark)
            summary_records = [
                line for line in compact.summary.split("\n") if line.startswith("- ")
            ]
            assert len(summary_records) == len(compact.watermark)
            assert all(
                line.startswith("## ") or line.startswith("- ") or line == ""
                for line in compact.summary.split("\n")
            )
        finally:
            await storage.aclose()


def index_lines(records: list[Any]) -> list[IndexLine]:
    """What the section must show for records, in the store's order."""
    return [IndexLine(r.name, r.type.value, shown(r.description)) for r in records]


# Editor features read documents the client never opened.


async def test_an_editor_request_never_reads_a_file_the_client_did_not_open(
    scene: Scene,
) -> None:
    secret = scene.outside / "notes.md"
    secret.write_text("see memory:seed-0 and [[seed-1]]\n")
    agent_token = add_token(scene.data_dir, "agent", "helper", task="t")
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:
        client = await connect(daemon)
        await client.initialize({"token": agent_token})
        links = await client.request(
            "textDocument/documentLink", {"textDocument": {"uri": secret.as_uri()}}
        )
        client.writer.close()
        daemon.stop()
    assert links.get("result") in (None, []), f"the daemon read {secret}: {links}"
