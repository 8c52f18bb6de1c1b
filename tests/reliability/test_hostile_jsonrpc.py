"""Hostile input (issue #11, part 3): the JSON-RPC entry point, property-based.

A real `lazy engine` is fed generated messages through a raw client, one process per module so
that damage done by one example shows in the next; frames carry bytes that are not UTF-8, and a
Content-Length of 100 MB whose body never comes reaches an engine and a daemon. Nothing may crash:
each request gets a result or a typed error, nothing refused is written, and the engine (and the
daemon's other clients) keep being served.

Covered elsewhere, not repeated: malformed JSON, a body over 8 MiB, a header without
Content-Length and a client that hangs up mid-message (tests/e2e/test_engine_stdio.py and
tests/e2e/daemon/test_clients.py).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazy_memory.rpc.jsonrpc.methods import METHODS
from lazy_memory.rpc.jsonrpc.storage_methods import STORAGE_METHODS
from tests.reliability.figures import Figures, Scale
from tests.reliability.hostile import (
    HEADING,
    process_environment,
    run_settings,
    shared_process,
)
from tests.reliability.live_engine import LiveEngine, frame_bytes, memory_rss_kib
from tests.reliability.write_paths import COMMAND_READS, COMMAND_WRITES
from tests.support.daemon import add_token, running_daemon
from tests.support.hostile_text import hostile_text, json_values, storable_text
from tests.support.jsonrpc import RawClient

TYPED_CODES = frozenset({-32700, -32600, -32601, -32602, -32002, *range(-32018, -32009)})
"""Every error code a request may get: JSON-RPC's own and the engine's typed errors.

-32603 (internal error) is not among them: it means something escaped untyped.
"""


# The JSON-RPC entry point: one real engine for the whole module.


@pytest.fixture(scope="module")
def engine(workspace: Path) -> Iterator[LiveEngine]:
    """A builder's `lazy engine` on a sqlite store, shared by the module's examples."""
    yield from shared_process(LiveEngine, workspace, "engine")


def method_params(method: str) -> st.SearchStrategy[Any]:
    """Params for method: its own fields with hostile values, or any JSON at all."""
    table = METHODS.get(method) or STORAGE_METHODS.get(method)
    if table is None:
        return json_values()
    fields = {name: json_values() for name in table.params.model_fields}
    return st.one_of(st.fixed_dictionaries({}, optional=fields), json_values())


COMMANDS = [*COMMAND_WRITES, *COMMAND_READS]
# Lifecycle messages that end the session are left out, and so are the textDocument/* editor
# features: they read documents the client never opened from disk (see test_confined_reads.py).
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
