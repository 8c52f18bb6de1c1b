"""Talking to `lazy engine` as an editor does: the capabilities an editor declares, records
saved by another process, documents opened, the positions and spans of the LSP."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from tests.support.jsonrpc import RawClient

StartEditor = Callable[..., Awaitable[RawClient]]
URI = "file:///project/notes.md"
INLAY_HINTS = {
    "textDocument": {"inlayHint": {}},
    "workspace": {"inlayHint": {"refreshSupport": True}},
}
CODE_LENSES = {"textDocument": {}, "workspace": {"codeLens": {"refreshSupport": True}}}


def lazy(*arguments: str) -> None:
    """Run the `lazy` CLI against the test's store (another process than the engine)."""
    subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        check=True,
        capture_output=True,
        timeout=60,
    )


def save(name: str, description: str, body: str = "the body") -> None:
    lazy("memory", "save", name, "--type", "project", "--description", description, "--body", body)


async def open_document(client: RawClient, text: str, uri: str = URI) -> None:
    document = {"uri": uri, "languageId": "markdown", "version": 1, "text": text}
    await client.notify("textDocument/didOpen", {"textDocument": document})


async def next_message(client: RawClient, method: str) -> dict[str, Any]:
    """The next unsolicited message of this method, answering the server's requests on the way."""
    while True:
        message = await client.next_unsolicited()
        if "id" in message and "method" in message:
            await client.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        if message.get("method") == method:
            return message


def at(line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": URI}, "position": {"line": line, "character": character}}


def span(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}
