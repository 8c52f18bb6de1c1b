"""A raw JSON-RPC client for end-to-end tests, independent of pygls: the wire is the contract.

It frames messages itself and hands back each response exactly as it crossed the wire.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TIMEOUT = 30.0


class RawClient:
    """One connection: requests by id, notifications and id-less errors kept for inspection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ids = itertools.count(1)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.unsolicited: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.process: asyncio.subprocess.Process | None = None
        self.receiving = asyncio.ensure_future(self._receive())

    @classmethod
    async def spawn(
        cls,
        arguments: list[str],
        environment: Mapping[str, str],
        stderr: Path,
        cwd: Path | None = None,
    ) -> RawClient:
        """Start `python -m lazy_memory.rpc.cli ARGUMENTS` (in cwd) with its stderr in a file."""
        with stderr.open("ab") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "lazy_memory.rpc.cli",
                *arguments,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=dict(environment),
                cwd=cwd,
            )
        assert process.stdout is not None
        assert process.stdin is not None
        client = cls(process.stdout, process.stdin)  # type: ignore[arg-type]
        client.process = process
        return client

    async def send_raw(self, data: bytes) -> None:
        """Write bytes as they are, framing or not."""
        self.writer.write(data)
        await self.writer.drain()

    async def send(self, message: dict[str, Any]) -> None:
        """Frame and write one message."""
        body = json.dumps(message).encode("utf-8")
        await self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and return the whole response message."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self.exchange(message)

    async def exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send message, exactly as given, as a request of the next id; the whole response."""
        if self.receiving.done():  # nothing would ever answer it
            raise ConnectionError("connection closed")
        message_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[message_id] = future
        await self.send({**message, "id": message_id})
        return await asyncio.wait_for(future, TIMEOUT)

    async def result(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result, failing the test on an error response."""
        response = await self.request(method, params)
        assert "error" not in response, response
        return response["result"]

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def initialize(
        self, options: Any = None, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The LSP handshake (declaring the given client capabilities); the response."""
        params: dict[str, Any] = {
            "processId": None,
            "rootUri": None,
            "capabilities": capabilities or {},
        }
        if options is not None:
            params["initializationOptions"] = options
        response = await self.request("initialize", params)
        if "result" in response:
            await self.notify("initialized", {})
        return response

    async def next_unsolicited(self) -> dict[str, Any]:
        """The next message that answered no pending request (id-less errors, notifications)."""
        return await asyncio.wait_for(self.unsolicited.get(), TIMEOUT)

    async def next_error(self) -> dict[str, Any]:
        """The next reply no request awaits (an id-less error), past any notification that
        writes to the store send (`lazy/memory/changed`) and past requests from the server."""
        while "method" in (message := await self.next_unsolicited()):
            pass
        return message

    async def close(self) -> int | None:
        """shutdown, exit, and the process's exit status (None for a socket)."""
        if not self.receiving.done():
            await self.request("shutdown")
            await self.notify("exit")
        self.writer.close()
        if self.process is not None:
            return await asyncio.wait_for(self.process.wait(), TIMEOUT)
        return None

    async def kill(self) -> None:
        """Kill the process if it is still running (a test's clean-up); wait for it to end."""
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    async def closed_by_peer(self) -> bool:
        """True once the other side has closed the connection."""
        await asyncio.wait_for(asyncio.shield(self.receiving), TIMEOUT)
        return True

    async def _receive(self) -> None:
        while True:
            length = None
            while True:
                try:
                    line = await self.reader.readline()
                except ConnectionError:  # a reset: closed as surely as by an end of stream
                    line = b""
                if not line:
                    for future in self.pending.values():
                        if not future.done():
                            future.set_exception(ConnectionError("connection closed"))
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(await self.reader.readexactly(length))
            future = self.pending.pop(message.get("id"), None) if "method" not in message else None
            if future is not None:
                future.set_result(message)
            else:
                await self.unsolicited.put(message)
