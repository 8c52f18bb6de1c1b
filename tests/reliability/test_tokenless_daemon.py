"""The store's boundaries (issue #11, part 4; tests/reliability/boundaries.py): a daemon
answers nothing but errors to a connection without a valid token, even to requests pipelined
behind a refused initialize.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lazy_memory.adapters.tokens import digest
from tests.reliability.boundaries import HEADING
from tests.reliability.boundary_scene import Scene, lazy, store_state
from tests.reliability.figures import Figures, Scale
from tests.reliability.write_paths import (
    PERMISSION_DENIED,
    call,
    connect,
    error_code,
    every_call,
    method_calls,
    writes,
)
from tests.support.daemon import add_token, running_daemon
from tests.support.hostile_text import json_values

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
