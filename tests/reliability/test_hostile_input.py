"""Hostile input (issue #11, part 3): property-based tests of every way text gets in.

The query parser and the front-matter reader are driven in-process; the JSON-RPC entry point
is a real `lazy engine` fed generated messages through a raw client, one process per module so
that damage done by one example shows in the next; the MCP entry point is a real `lazy mcp`
behind the MCP SDK's client. Names and bodies carry control characters, NUL, lone surrogates,
SQL, and text imitating the frames around them. Nothing may crash: each input gets a typed
error, or is stored and comes back byte-identical, on sqlite, files and postgres alike.

Covered elsewhere, not repeated: malformed JSON, a body over 8 MiB, a header without
Content-Length and a client that hangs up mid-message (tests/e2e/test_engine_stdio.py and
test_daemon.py), the authoring rules one by one (tests/unit/test_records.py), punctuation and
FTS syntax in queries (tests/unit/test_search.py), what every output shows of hostile text
(test_hostile_output.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lazy_memory.adapters.harness import ClaudeCodeMemory, slug
from lazy_memory.engine.errors import InvalidQuery
from lazy_memory.engine.importing import plan_import
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_model import SearchQuery, tokenize
from lazy_memory.engine.search_parser import MAX_TERMS, parse_query
from lazy_memory.engine.search_ranking import Document, SearchIndex, matches
from lazy_memory.engine.visible import visible_line, visible_text
from lazy_memory.rpc.methods import METHODS
from lazy_memory.rpc.storage_methods import STORAGE_METHODS
from lazy_memory.wire.framing import MAX_MESSAGE_BYTES
from tests.daemon import add_token, running_daemon
from tests.e2e.jsonrpc import RawClient
from tests.reliability.conftest import Figures, Scale
from tests.reliability.hostile_text import (
    CORPUS,
    FRAKTUR,
    SQL,
    TYPES,
    hostile_text,
    is_one_line,
    is_one_search_term,
    is_unicode,
    json_values,
    one_line,
    storable_text,
    unsafe_characters,
    valid_names,
    valid_save,
)
from tests.reliability.live_engine import (
    LAZY,
    LiveEngine,
    LiveMcp,
    engine_environment,
    frame_bytes,
    memory_rss_kib,
)
from tests.reliability.stores import BACKENDS, backend_environment
from tests.reliability.write_paths import COMMAND_READS, COMMAND_WRITES

HEADING = "hostile input"
TYPED_CODES = frozenset({-32700, -32600, -32601, -32602, -32002, *range(-32018, -32009)})
"""Every error code a request may get: JSON-RPC's own and the engine's typed errors.

-32603 (internal error) is not among them: it means something escaped untyped.
"""
STORE_CODES = frozenset({-32011, -32602})
"""What a save that breaks a rule gets: InvalidRecord, or invalid params."""
SAVE_ARGUMENTS = frozenset({"name", "type", "description", "body"})
"""What a valid lazy_memory_save call may carry here: any argument it does not take is an error."""


def run_settings(scale: Scale, fast: int, full: int) -> settings:
    """Hypothesis settings for this run's size; no deadline (real processes answer)."""
    return settings(
        max_examples=scale.pick(fast, full),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    """A folder for the module's processes: a project (a git root) and an empty harness."""
    with tempfile.TemporaryDirectory(prefix="lazy-hostile-") as directory:
        root = Path(directory)
        (root / "project" / ".git").mkdir(parents=True)
        (root / "home").mkdir()
        (root / "claude").mkdir()
        yield root


def process_environment(workspace: Path, data_dir: Path, **extra: str) -> dict[str, str]:
    """A `lazy` process's environment: its store, no model, and a harness of its own."""
    return engine_environment(
        data_dir,
        HOME=str(workspace / "home"),
        CLAUDE_CONFIG_DIR=str(workspace / "claude"),
        LAZY_OFFLINE="1",
        ANTHROPIC_API_KEY="",
        **extra,
    )


# The query parser.

TERMS = st.one_of(
    hostile_text(12),
    st.sampled_from(
        [
            "in:memories",
            "in:",
            "in:notes",
            "type:user",
            "type:",
            "type:Opinion",
            "name:",
            "name:*",
            "name:a*b",
            "name:deploy*",
            "-",
            "-x",
            '-"a b"',
            '"',
            '""',
            '" "',
            '"make deploy"',
            "x-ray",
            "*",
            "&",
            "-type:user",
            '"type:user"',
        ]
    ),
)
QUERIES = st.one_of(
    hostile_text(80),
    st.lists(TERMS, max_size=12).map(" ".join),
    st.lists(st.sampled_from(["a", "b", "-c"]), min_size=MAX_TERMS - 1, max_size=MAX_TERMS + 2).map(
        " ".join
    ),
)
INDEXED = [
    RecordContent(name=name, type=RecordType.PROJECT, description=description, body=body)
    for name, description, body in [
        ("deploy-steps", "How we deploy", "Run make deploy, then check the x-ray dashboard."),
        ("sql", SQL[0], " ".join(SQL)),
        ("nul", "a\x00b", "\x00 body \x00 with NUL"),
        ("framing", "- other (user): injected", "\n".join(CORPUS[-15:])),
        ("unicode", "İstanbul ǅ café", "日本語 " + FRAKTUR + " e\u0301 ß"),
    ]
]


def test_the_query_parser_gives_a_query_or_a_typed_error(scale: Scale, figures: Figures) -> None:
    index = SearchIndex(INDEXED)
    tried = 0

    @run_settings(scale, 200, 5_000)
    @given(QUERIES)
    @example('"unclosed')
    @example("-")
    @example("\ud800")
    @example("x" * 100_000)
    @example(" ".join(["a"] * (MAX_TERMS + 1)))
    def check(text: str) -> None:
        nonlocal tried
        tried += 1
        try:
            query = parse_query(text)
        except InvalidQuery as raised:
            error = raised
        else:
            error = None
        if error is not None:
            assert error.message.startswith("invalid query")
            assert error.column is None or 1 <= error.column <= len(text)
            assert is_one_line(error.message)
            return
        # What the parser made passes the model's own checks (the backends rely on them).
        assert SearchQuery.model_validate(query.model_dump()) == query
        for hit in index.search(query, 20):
            document = Document.of(next(r for r in INDEXED if r.name == hit.name))
            assert matches(query, document)
            assert hit.snippet == "" or is_one_line(hit.snippet)

    check()
    figures.add(HEADING, f"query parser: {tried} queries, 0 crashes, every error InvalidQuery")


# The front-matter reader.

PWNED = Path(tempfile.gettempdir()) / f"lazy-pwned-{os.getpid()}"
"""Where a YAML tag that runs a command would leave its mark."""

YAML_VALUES = st.one_of(
    hostile_text(30),
    st.sampled_from(
        [
            "|",
            ">-",
            '"unterminated',
            "'single'",
            "[a, b",
            "{a: 1}",
            "&anchor [*anchor]",
            "*undefined",
            f"!!python/object/apply:os.system ['touch {PWNED}']",
            "!!binary aGVsbG8=",
            "null",
            "~",
            "yes",
            "007",
            "2026-01-02",
            ": :",
            "- a",
            "a: b: c",
            "[" * 2000,
        ]
    ),
)
KEYS = st.sampled_from(
    ["name", "description", "type", "metadata", "originSessionId", "modified", "  type", "x"]
)
FRONT_MATTER = st.lists(
    st.one_of(st.tuples(KEYS, YAML_VALUES).map(": ".join), hostile_text(20)), max_size=6
).map("\n".join)
DOCUMENTS = st.tuples(
    st.sampled_from(["---", "--- ", "---\r", "", "----", "\ufeff---"]),
    FRONT_MATTER,
    st.sampled_from(["---", "--- ", "...", ""]),
    hostile_text(80),
).map("\n".join)
FILES = st.one_of(
    DOCUMENTS.map(lambda text: text.encode("utf-8", "surrogatepass")),
    hostile_text(120).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
)


def test_the_front_matter_reader_gives_a_verbatim_memory_or_a_reason(
    scale: Scale, figures: Figures
) -> None:
    tried = 0
    with tempfile.TemporaryDirectory(prefix="lazy-harness-") as directory:
        root = Path(directory)
        project = root / "project"
        project.mkdir()
        config = root / "claude"
        memory = config / "projects" / slug(project.resolve()) / "memory"
        memory.mkdir(parents=True)
        reader = ClaudeCodeMemory(
            project, root / "data", {"HOME": str(root), "CLAUDE_CONFIG_DIR": str(config)}
        )

        @run_settings(scale, 50, 2_000)
        @given(FILES)
        @example(b"---\nname: [" + b"[" * 5000 + b"\n---\nbody")
        @example(b"---\nname: &a [*a, *a]\ndescription: *a\n---\n")
        @example(b"---\nname: x\n---")
        @example("---\ndescription: \u2028\n---\n\ud800".encode("utf-8", "surrogatepass"))
        def check(data: bytes) -> None:
            nonlocal tried
            tried += 1
            path = memory / "note.md"
            path.write_bytes(data)
            scan = asyncio.run(reader.scan())
            assert not PWNED.exists()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                [skipped] = scan.skipped
                assert (scan.memories, skipped.path) == ([], str(path))
                assert skipped.reason.startswith("not UTF-8 text")
                return
            assert scan.skipped == []
            [found] = scan.memories
            # Verbatim: the body is the whole file or what follows its front matter.
            assert text.endswith(found.body)
            assert found.name
            plan = plan_import(scan, existing=[])
            for planned in plan.records:
                assert planned.content.body == found.body
                assert planned.content.description == found.description
                assert is_one_line(planned.content.name)
            assert len(plan.records) + len(plan.skipped) == 1

        check()
    figures.add(HEADING, f"front-matter reader: {tried} files, 0 crashes, every body verbatim")


# The JSON-RPC entry point: one real engine for the whole module.


@pytest.fixture(scope="module")
def engine(workspace: Path) -> Iterator[LiveEngine]:
    """A builder's `lazy engine` on a sqlite store, shared by the module's examples."""
    live = LiveEngine(
        process_environment(workspace, workspace / "engine-data", LAZY_ACTOR="fuzzer"),
        workspace / "engine.log",
        cwd=workspace / "project",
    )
    yield live
    live.close()


def method_params(method: str) -> st.SearchStrategy[Any]:
    """Params for method: its own fields with hostile values, or any JSON at all."""
    table = METHODS.get(method) or STORAGE_METHODS.get(method)
    if table is None:
        return json_values()
    fields = {name: json_values() for name in table.params.model_fields}
    return st.one_of(st.fixed_dictionaries({}, optional=fields), json_values())


COMMANDS = [*COMMAND_WRITES, *COMMAND_READS]
# Lifecycle messages that end the session are left out, and so are the textDocument/* editor
# features: they read documents the client never opened from disk (see test_boundaries.py).
METHOD_NAMES = st.one_of(
    st.sampled_from([*METHODS, *STORAGE_METHODS, "initialize", "workspace/symbol"]),
    st.sampled_from(["lazy/memory/teleport", "", "lazy/", "$/unknown", "rpc.discover"]),
    hostile_text(20).filter(lambda name: not name.startswith(("textDocument/", "exit", "shut"))),
)
REQUESTS = st.one_of(
    METHOD_NAMES.flatmap(lambda method: st.tuples(st.just(method), method_params(method))),
    st.tuples(
        st.just("workspace/executeCommand"),
        st.fixed_dictionaries(
            {"command": st.one_of(st.sampled_from(COMMANDS), hostile_text(10))},
            optional={"arguments": st.lists(json_values(), max_size=3)},
        ),
    ),
)
IDS = st.one_of(
    st.integers(min_value=1, max_value=2**53),
    storable_text(10).map(lambda text: "id:" + text),
    st.sampled_from([None, 1.5, True, [1], {"a": 1}]),
)


def test_every_request_gets_a_result_or_a_typed_error_and_the_engine_keeps_serving(
    engine: LiveEngine, scale: Scale, figures: Figures
) -> None:
    tried = 0

    @run_settings(scale, 150, 3_000)
    @given(REQUESTS, IDS)
    @example(("lazy/memory/recall", {"name": "\ud800"}), 7)
    @example(("lazy/memory/rm", {"name": "\udcff"}), 8)
    @example(("lazy/memory/history", {"name": "a\ud800"}), 9)
    @example(("lazy/storage/get_record", {"name": "\ud800"}), 10)
    @example(("lazy/search", {"query": "\ud800"}), 11)
    @example(("lazy/memory/save", {"name": "x", "type": "user", "description": "d"}), None)
    @example(("workspace/executeCommand", {"command": "lazy-memory.rm", "arguments": [1, 2]}), 12)
    @example(("initialize", {"processId": None, "capabilities": {}}), 13)
    def check(request: tuple[str, Any], message_id: Any) -> None:
        nonlocal tried
        tried += 1
        method, params = request
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if message_id is not None:
            message["id"] = message_id
            answer = engine.message(message)
            assert answer.get("jsonrpc") == "2.0"
            assert ("result" in answer) != ("error" in answer), answer
            if "error" in answer:
                assert answer["error"]["code"] in TYPED_CODES, answer
                assert isinstance(answer["error"]["message"], str)
        else:
            engine.send_raw(frame_bytes(message))
        assert engine.serving(), "the engine stopped answering"
        engine.drain_unsolicited()

    check()
    assert engine.alive()
    assert "Traceback" not in engine.log.read_text(errors="replace")
    figures.add(
        HEADING, f"JSON-RPC engine: {tried} generated requests, 0 crashes, 0 untyped errors"
    )


BAD_UTF8 = [
    b"\xff\xfe",
    b"\xc0\xaf",  # an overlong "/"
    b"\xed\xa0\x80",  # a surrogate, encoded
    b"\xe2\x82",  # a character cut short
    b"\xf8\x88\x80\x80\x80",  # a five-byte form
    b"\x00\xff",
]


@pytest.mark.parametrize("bad", BAD_UTF8, ids=lambda bad: bad.hex())
def test_bytes_that_are_not_utf8_in_a_frame_are_a_parse_error_and_nothing_is_written(
    engine: LiveEngine, bad: bytes
) -> None:
    name = "utf8-" + bad.hex()
    body = (
        b'{"jsonrpc": "2.0", "id": 77, "method": "lazy/memory/save", "params": {"name": "'
        + name.encode()
        + b'", "type": "user", "description": "d", "body": "'
        + bad
        + b'"}}'
    )

    engine.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    refused = engine.next_unsolicited()
    try:
        # Python's JSON reader lets an encoded surrogate through as a lone one...
        bad.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        assert (refused["id"], refused["error"]["code"]) == (None, -32700)
    else:
        # ...which the params refuse, naming the field.
        assert (refused["id"], refused["error"]["code"]) == (77, -32602)
        assert "body holds a lone surrogate" in refused["error"]["message"]
    assert engine.request("lazy/memory/recall", {"name": name})["error"]["code"] == -32010
    assert engine.serving()


# Hostile records, through the engine, on every backend.


@pytest.fixture(scope="module", params=BACKENDS)
def backend_engine(request: pytest.FixtureRequest, workspace: Path) -> Iterator[LiveEngine]:
    """A builder's engine on a fresh store of each backend."""
    backend: str = request.param
    live = LiveEngine(
        process_environment(
            workspace,
            workspace / f"{backend}-data",
            LAZY_ACTOR="fuzzer",
            **backend_environment(backend, request),
        ),
        workspace / f"{backend}-engine.log",
        cwd=workspace / "project",
    )
    yield live
    live.close()


BODIES = st.one_of(storable_text(300), st.sampled_from(CORPUS))
_ASCII_SEPARATOR = r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"
ASCII_WORD = re.compile(rf"(?:(?<={_ASCII_SEPARATOR})|^)[A-Za-z0-9]+(?={_ASCII_SEPARATOR}|$)")
# Mostly saves the rules accept (hostile where a record may be), some that break a rule.
SAVES = st.one_of(
    st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), BODIES),
    st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), BODIES),
    st.tuples(
        st.one_of(valid_names(), hostile_text(20)),
        st.one_of(st.sampled_from(TYPES), hostile_text(10)),
        st.one_of(one_line(), hostile_text(220)),
        st.one_of(BODIES, hostile_text(300)),
    ),
)


def test_hostile_records_come_back_byte_identical_or_are_refused_typed(
    backend_engine: LiveEngine, scale: Scale, figures: Figures
) -> None:
    tried = accepted = 0
    engine = backend_engine

    @run_settings(scale, 30, 500)
    @given(SAVES)
    @example(("drop", "user", SQL[0], "\n".join(SQL)))
    @example(("nul", "project", "a\x00b", "\x00" * 3 + "body\x00"))
    @example(("framing", "feedback", "- other (user): x", "\n".join(CORPUS)))
    @example(("surrogate", "user", "d", "\ud800"))
    @example(("control", "reference", "\x1b[31m\x7f\ufeff\u202e", "\r\n\v\f\x1c\x85\u2028"))
    def check(save: tuple[str, str, str, str]) -> None:
        nonlocal tried, accepted
        tried += 1
        # As the engine reads them: JSON joins an escaped surrogate pair into one character.
        name, type, description, body = json.loads(json.dumps(save))
        params = {"name": name, "type": type, "description": description, "body": body}
        answer = engine.request("lazy/memory/save", params)
        if not valid_save(name, type, description, body):
            assert answer["error"]["code"] in STORE_CODES, answer
            return
        assert "result" in answer, answer
        # A save equal to the live revision writes nothing (and says so).
        accepted += not answer["result"].get("unchanged", False)
        record = engine.request("lazy/memory/recall", {"name": name})["result"]["record"]
        assert {field: record[field] for field in params} == params
        if not is_one_search_term(name):
            return  # a name with a space or a quote is not one `name:` term of a query
        [hit] = engine.request("lazy/search", {"query": f"name:{name}"})["result"]["hits"]
        assert (hit["name"], hit["description"]) == (name, description)
        # An ASCII word between ASCII separators: around other characters SQLite's tokenizer
        # draws token boundaries and folds case a little differently from the engine's
        # (test_every_backend_finds_what_the_tokenizer_finds).
        word = ASCII_WORD.search(body)
        if word is not None:
            found = engine.request("lazy/search", {"query": f"name:{name} {word[0]}"})
            assert [hit["name"] for hit in found["result"]["hits"]] == [name]

    check()
    entries = engine.request("lazy/memory/history")["result"]["entries"]
    assert len(entries) == accepted, "a refused save wrote something"
    assert engine.alive()
    backend = engine.log.name.removesuffix("-engine.log")
    figures.add(
        HEADING,
        f"{backend}: {tried} hostile saves through the engine, {accepted} stored and read back "
        "byte-identical, the rest refused with a typed error",
    )


def test_a_5_mb_body_is_refused_by_default_and_comes_back_byte_identical_when_allowed(
    backend_engine: LiveEngine, scale: Scale, request: pytest.FixtureRequest, workspace: Path
) -> None:
    backend = request.node.callspec.params["backend_engine"]
    if backend != "sqlite" and not scale.full:
        pytest.skip("the fast run sends 5 MB to sqlite only; the full run to every backend")
    piece = "".join(CORPUS[:20]).replace("\ud800", "").encode("utf-8", "ignore").decode()
    body = (piece * (5 * 1024 * 1024 // len(piece.encode())))[: 5 * 1024 * 1024]
    params = {"name": "five-mb", "type": "project", "description": "big", "body": body}
    assert len(frame_bytes({"params": params})) < MAX_MESSAGE_BYTES

    refused = backend_engine.request("lazy/memory/save", params)
    assert refused["error"]["code"] == -32011, refused
    assert "the limit is 65,536 bytes" in refused["error"]["message"]

    # A project that raises [memory] max_body_bytes stores it, and gives it back whole.
    project = workspace / f"{backend}-big-bodies"
    (project / ".git").mkdir(parents=True)
    (project / "lazy.toml").write_text(f"[memory]\nmax_body_bytes = {6 * 1024 * 1024}\n")
    environment = process_environment(
        workspace,
        workspace / f"{backend}-big-data",
        LAZY_ACTOR="fuzzer",
        **backend_environment(backend, request),
    )
    engine = LiveEngine(environment, workspace / f"{backend}-big-engine.log", cwd=project)
    try:
        saved = engine.request("lazy/memory/save", params)
        assert "result" in saved, saved
        recalled = engine.request("lazy/memory/recall", {"name": "five-mb"})
        assert recalled["result"]["record"]["body"] == body
    finally:
        engine.close()
    assert backend_engine.serving()


# A Content-Length of 100 MB whose body never comes.

HUNDRED_MB = 100 * 1024 * 1024


async def test_a_huge_content_length_that_never_arrives_is_neither_buffered_nor_fatal(
    workspace: Path, tmp_path: Path
) -> None:
    client = await RawClient.spawn(
        ["engine"], process_environment(workspace, tmp_path / "data"), tmp_path / "engine.log"
    )
    assert client.process is not None
    await client.initialize()
    await client.result(
        "lazy/memory/save", {"name": "kept", "type": "user", "description": "d", "body": "b"}
    )
    before = memory_rss_kib(client.process.pid)

    await client.send_raw(b"Content-Length: %d\r\n\r\n" % HUNDRED_MB + b"x" * (4 * 1024 * 1024))
    await asyncio.sleep(1.0)
    grown = memory_rss_kib(client.process.pid) - before
    client.writer.close()  # the client gives up before the 100 MB arrive

    assert await asyncio.wait_for(client.process.wait(), 30) == 0
    assert grown < 16 * 1024, f"the engine grew by {grown} KiB reading a body it refuses"
    log = (tmp_path / "engine.log").read_text()
    assert "Traceback" not in log
    assert "internal error" not in log


async def test_a_daemon_client_stuck_in_a_huge_message_disturbs_no_one(
    isolated_environment: Path,
) -> None:
    token = add_token(isolated_environment, "builder", "steady")
    socket_directory = Path(tempfile.mkdtemp(prefix="lzh-"))
    with running_daemon(isolated_environment, f"unix:{socket_directory / 's'}") as daemon:
        path = daemon.address.removeprefix("unix:")
        stuck = RawClient(*await asyncio.open_unix_connection(path))
        assert "result" in await stuck.initialize({"token": token})
        steady = RawClient(*await asyncio.open_unix_connection(path))
        assert "result" in await steady.initialize({"token": token})
        before = memory_rss_kib(daemon.process.pid)

        await stuck.send_raw(b"Content-Length: %d\r\n\r\n" % HUNDRED_MB + b"{" * 1_000_000)
        for number in range(20):
            saved = await steady.request(
                "lazy/memory/save",
                {"name": f"steady-{number}", "type": "user", "description": "d", "body": "b"},
            )
            assert saved["result"]["revision"] == 1
        grown = memory_rss_kib(daemon.process.pid) - before
        stuck.writer.close()
        await steady.close()

        assert grown < 16 * 1024
        assert daemon.stop() == 0
    assert "Traceback" not in "".join(daemon.log)


# The MCP entry point: the real `lazy mcp` behind the MCP SDK's client.


@pytest.fixture(scope="module")
def mcp_server(workspace: Path) -> Iterator[LiveMcp]:
    """A builder's `lazy mcp` on a sqlite store, shared by the module's examples."""
    live = LiveMcp(
        process_environment(workspace, workspace / "mcp-data", LAZY_ACTOR="fuzzer"),
        workspace / "mcp.log",
        cwd=workspace / "project",
    )
    yield live
    live.close()


TOOL_TEXT = st.one_of(storable_text(120), st.sampled_from([c for c in CORPUS if is_unicode(c)]))
TOOL_ARGUMENTS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(valid_names(), TOOL_TEXT),
        "type": st.one_of(st.sampled_from(TYPES), TOOL_TEXT),
        "description": st.one_of(one_line(), TOOL_TEXT),
        "body": TOOL_TEXT,
        "query": TOOL_TEXT,
        "extra": json_values(storable_text(10)),
    },
)
TOOLS = st.sampled_from(["lazy_memory_save", "lazy_memory_recall", "lazy_search", "lazy_nothing"])
VALID_SAVE_ARGUMENTS = st.fixed_dictionaries(
    {
        "name": valid_names(),
        "type": st.sampled_from(TYPES),
        "description": one_line(),
        "body": TOOL_TEXT,
    }
)
# Half the calls are saves the rules accept, hostile wherever a record may be.
TOOL_CALLS = st.one_of(
    st.tuples(st.just("lazy_memory_save"), VALID_SAVE_ARGUMENTS),
    st.tuples(TOOLS, TOOL_ARGUMENTS),
)


def test_every_tool_call_gets_a_result_or_an_error_result_and_the_server_keeps_serving(
    mcp_server: LiveMcp, workspace: Path, scale: Scale, figures: Figures
) -> None:
    tried = accepted = 0
    stored: dict[str, list[str]] = {}

    @run_settings(scale, 40, 1_000)
    @given(TOOL_CALLS)
    @example(
        ("lazy_memory_save", {"name": "sql", "type": "user", "description": SQL[0], "body": SQL[1]})
    )
    @example(
        ("lazy_memory_save", {"name": "nul", "type": "user", "description": "\x00", "body": "\x00"})
    )
    @example(("lazy_search", {"query": "\x00 '; DROP TABLE records; --"}))
    @example(("lazy_memory_recall", {"name": "'; DROP TABLE records; --"}))
    def check(call: tuple[str, dict[str, Any]]) -> None:
        nonlocal tried, accepted
        tried += 1
        tool, arguments = call
        result = mcp_server.call(lambda session: session.call_tool(tool, arguments))
        assert isinstance(result.is_error, bool)
        assert result.content, "every answer carries text for the model"
        assert unsafe_characters(json.dumps(result.model_dump(), ensure_ascii=False)) == []
        fields = [arguments.get(key) for key in ("name", "type", "description", "body")]
        fields = json.loads(json.dumps(fields))
        if tool == "lazy_memory_save" and all(isinstance(value, str) for value in fields):
            if valid_save(*fields) and set(arguments) <= SAVE_ARGUMENTS:
                assert not result.is_error, result
                accepted += not (result.structured_content or {}).get("unchanged", False)
                stored[fields[0]] = fields
                recalled = mcp_server.call(
                    lambda session: session.call_tool("lazy_memory_recall", {"name": fields[0]})
                )
                # What the model reads is made visible; the store keeps the bytes (below).
                record = recalled.structured_content
                name, type, description, body = fields
                shown = [visible_line(name), type, visible_line(description), visible_text(body)]
                assert [record[k] for k in ("name", "type", "description", "body")] == shown
            else:
                assert result.is_error, result
        elif tool == "lazy_nothing":
            assert result.is_error

    check()
    listed = subprocess.run(
        [*LAZY, "memory", "history", "--json"],
        env=process_environment(workspace, workspace / "mcp-data"),
        cwd=workspace / "project",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert len(json.loads(listed.stdout)) == accepted, "a refused save wrote something"
    records = subprocess.run(
        [*LAZY, "memory", "list", "--json"],
        env=process_environment(workspace, workspace / "mcp-data"),
        cwd=workspace / "project",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    fields = ("name", "type", "description", "body")
    kept = {r["name"]: [r[k] for k in fields] for r in json.loads(records.stdout)}
    assert kept == stored, "an MCP save did not keep its text byte-identical"
    figures.add(HEADING, f"MCP server: {tried} generated tool calls, 0 crashes, {accepted} saves")


def test_garbage_on_the_mcp_wire_never_stops_the_server(workspace: Path, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [*LAZY, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "mcp.log").open("wb"),
        env=process_environment(workspace, tmp_path / "data"),
        cwd=workspace / "project",
    )
    assert server.stdin is not None
    assert server.stdout is not None
    lines: list[bytes] = []
    reading = threading.Thread(target=lambda: lines.extend(server.stdout or ()), daemon=True)
    reading.start()

    def send(data: bytes) -> None:
        assert server.stdin is not None
        server.stdin.write(data + b"\n")
        server.stdin.flush()

    def answered(message_id: int) -> dict[str, Any]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for line in lines:
                message = json.loads(line)
                if message.get("id") == message_id:
                    return dict(message)
            time.sleep(0.02)
        raise AssertionError(f"no answer to request {message_id}")

    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"},
    }
    send(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}
        ).encode()
    )
    answered(1)
    send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    garbage = [
        b"garbage",
        b"\xff\xfe\x00",
        b"\x00" * 64,
        b'{"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {"name": '
        b'"lazy_search", "arguments": {"query": "\\ud800"}}}',
        b'{"jsonrpc": "2.0", "id": 901, "method": 5}',
        b'{"jsonrpc": "1.0", "id": 902, "method": "tools/list"}',
        b"[" * 100_000,
        b'{"jsonrpc": "2.0", "id": 903, "method": "tools/call", "params": {"name": '
        b'"lazy_memory_save", "arguments": {"name": "big", "type": "user", "description": '
        b'"d", "body": "' + b"\xff" * 10 + b"x" * (5 * 1024 * 1024) + b'"}}}',
        b"Content-Length: 10\r\n\r\n{}",
    ]
    for number, junk in enumerate(garbage, start=2):
        send(junk)
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "lazy_memory_recall", "arguments": {}},
                }
            ).encode()
        )
        assert "result" in answered(number), f"no answer after {junk[:40]!r}"
    assert server.poll() is None
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    reading.join(timeout=30)
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", "stdout carries only protocol messages"
    big = answered(903)  # 5 MB with bytes that are not UTF-8: read, and refused by the limit
    assert big["result"]["isError"] is True, big
    assert "the limit is 65,536 bytes" in big["result"]["content"][0]["text"]
    # A request the SDK cannot read is answered all the same, with its id: the client does
    # not wait forever (rpc/mcp_stdio.py answers what the SDK's transport would drop).
    assert answered(900)["error"]["code"] == -32700  # a lone surrogate escape
    assert answered(901)["error"]["code"] == -32600  # a method that is not a string
    assert answered(902)["error"]["code"] == -32600  # not JSON-RPC 2.0
    unanswerable = [json.loads(line) for line in lines if json.loads(line).get("id") is None]
    assert {message["error"]["code"] for message in unanswerable} <= {-32700, -32600}


@pytest.mark.parametrize(
    ("arguments", "status"),
    [
        (["memory", "show", b"\xff"], 3),
        (["memory", "rm", b"\xff"], 3),
        (["memory", "save", b"\xff", "-t", "user", "-d", "d", "--body", "b"], 4),
        (["memory", "save", "ok", "-t", "user", "-d", b"caf\xe9", "--body", "b"], 4),
        (["search", b"\xff\xfe"], 4),
        (["search", b"name:\xff"], 4),
    ],
    ids=["show", "rm", "save-name", "save-description", "search", "search-name"],
)
def test_command_line_arguments_that_are_not_utf8_get_a_typed_error(
    workspace: Path, tmp_path: Path, arguments: list[str | bytes], status: int
) -> None:
    done = subprocess.run(
        [*LAZY, *arguments],
        env=process_environment(workspace, tmp_path / "data"),
        cwd=workspace / "project",
        capture_output=True,
        timeout=60,
    )

    assert done.returncode == status, done.stderr
    assert done.stderr.count(b"\n") == 1
    assert done.stdout == b""


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param(
            "sqlite",
            marks=pytest.mark.xfail(
                strict=True,
                reason="SQLite's unicode61 tokenizer folds İ (U+0130) and Cherokee letters "
                "otherwise than str.lower(), and takes unassigned code points for letters: such "
                "words are not found on sqlite alone",
            ),
        ),
        "files",
        "postgres",
    ],
)
async def test_every_backend_finds_what_the_tokenizer_finds(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from lazy_memory.adapters.clock import SystemClock
    from lazy_memory.engine.identity import Identity
    from lazy_memory.engine.records import Actor, ActorKind
    from lazy_memory.engine.service import MemoryService
    from tests.reliability.stores import open_store

    storage = await open_store(backend, tmp_path, request)
    try:
        service = MemoryService(
            storage, Identity(actor=Actor(kind=ActorKind.BUILDER, detail="b")), SystemClock()
        )
        words = ["İstanbul", "Ꭰꭰ", "straße", "ǅemal", "Ωmega", "00\U00018cd6"]
        for number, word in enumerate(words):
            await service.save(f"word-{number}", type="user", description="d", body=word)
        missed = [
            word
            for number, word in enumerate(words)
            for token in tokenize(word)
            if [hit.name for hit in await service.search(f"{token} name:word-{number}")]
            != [f"word-{number}"]
        ]
    finally:
        await storage.aclose()
    assert missed == []
