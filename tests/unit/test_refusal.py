"""A connection refused at the daemon's cap (rpc/jsonrpc/connection_limits.py `see_out`), in
process: over TCP and over TLS, a client that wrote first reads the whole refusal and then the end,
and the daemon hears that the socket is closed. The daemon itself, on a unix socket, is
tests/e2e/test_daemon_limits.py's."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path

import pytest

from lazy_memory.rpc.jsonrpc.connection_limits import see_out
from lazy_memory.wire.framing import frame
from tests.e2e.daemon.raw_daemon import self_signed_certificate


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
async def test_a_refused_client_reads_why_then_the_end_and_the_close_is_told(
    tmp_path: Path, tls: bool
) -> None:
    certificate, key = self_signed_certificate(tmp_path)
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(certificate, key)
    trusting = ssl.create_default_context(cafile=str(certificate))
    ended: list[asyncio.BaseTransport] = []
    closed = asyncio.Event()

    def refuse(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        see_out(writer, "the daemon is full: try later", lambda t: (ended.append(t), closed.set()))

    server = await asyncio.start_server(refuse, "127.0.0.1", 0, ssl=serving if tls else None)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1",
            port,
            ssl=trusting if tls else None,
            server_hostname="localhost" if tls else None,
        )
        writer.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize"}))
        received = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        await asyncio.wait_for(closed.wait(), 10)
    finally:
        server.close()

    said = json.loads(received.partition(b"\r\n\r\n")[2])
    assert said == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32000, "message": "the daemon is full: try later"},
    }
    assert len(ended) == 1
