"""`lazy engine` told to shut down while requests are still running, over a raw client.

LSP's shutdown ends a session, not the requests in it: each one the engine has read is
answered (a save is acknowledged, never cancelled after it may have written), and only then
is shutdown; a request sent after shutdown is refused, as LSP says.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from pathlib import Path
from typing import Any

from tests.e2e.store_history import history
from tests.support.jsonrpc import TIMEOUT, RawClient

SAVES = 20
"""Saves sent with the shutdown in one write: all are read before the shutdown is handled."""


def frames(messages: list[dict[str, Any]]) -> bytes:
    """Messages framed back to back, to be written at once."""
    bodies = [json.dumps({"jsonrpc": "2.0", **message}).encode() for message in messages]
    return b"".join(b"Content-Length: %d\r\n\r\n" % len(body) + body for body in bodies)


async def test_requests_in_flight_are_answered_before_the_shutdown_reply(tmp_path: Path) -> None:
    client = await RawClient.spawn(
        ["engine"], {**os.environ, "LAZY_ACTOR": "builder-7"}, tmp_path / "engine.log"
    )
    try:
        assert "result" in await client.initialize()
        loop = asyncio.get_running_loop()
        answered: list[Any] = []

        def note(message_id: int, _: object) -> None:
            answered.append(message_id)

        messages: list[dict[str, Any]] = []
        for number in range(SAVES + 1):
            message_id = next(client.ids)
            future = client.pending[message_id] = loop.create_future()
            future.add_done_callback(functools.partial(note, message_id))
            if number < SAVES:
                params = {
                    "name": f"note-{number}",
                    "type": "project",
                    "description": "d",
                    "body": "b",
                }
                messages.append({"id": message_id, "method": "lazy/memory/save", "params": params})
            else:
                messages.append({"id": message_id, "method": "shutdown"})
        await client.send_raw(frames(messages))
        responses = await asyncio.wait_for(
            asyncio.gather(*(client.pending[m["id"]] for m in messages)), TIMEOUT
        )

        *saves, shutdown = responses
        assert [response.get("error") for response in saves] == [None] * SAVES
        assert [response["result"]["revision"] for response in saves] == [1] * SAVES
        assert shutdown == {"jsonrpc": "2.0", "id": messages[-1]["id"], "result": None}
        assert answered[-1] == shutdown["id"], "shutdown was answered before a request"

        late = await client.request("lazy/memory/recall", {})
        assert late["error"]["code"] == -32600
        assert "shut down" in late["error"]["message"]
        await client.notify("exit")
        assert client.process is not None
        assert await asyncio.wait_for(client.process.wait(), TIMEOUT) == 0
    finally:
        if client.process is not None and client.process.returncode is None:
            client.process.kill()
            await client.process.wait()
    assert {entry["name"] for entry in history()} == {f"note-{n}" for n in range(SAVES)}
