"""How the engine's messages pass through pygls: the converter it reads them with, and
replies in plain JSON, framed and written once.

pygls copies a result with cattrs, dumps the message to a string, adds the header to it and
encodes that: four copies of a reply that is megabytes at 100,000 records. A table method's
result is already plain JSON (parts of it pre-encoded, wire/encoded.py), so it is written into
one buffer, header and all, and handed to the connection's writer as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

import attrs
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol import default_converter as pygls_converter

from lazy_memory.wire.encoded import json_bytes


def send_once(
    writer: Any,
    data: Any,
    serialize: Callable[[Any], Any],
    content_type: str,
    charset: str,
) -> bool:
    """Write data's frame when it is a response whose result is plain JSON; False (nothing
    written) for any other message, which pygls sends its own way.

    writer is the protocol's: both connections' (rpc/jsonrpc/stdio.py, rpc/jsonrpc/daemon.py)
    write at once and return nothing to await, whatever pygls's type for it says.
    """
    if (
        writer is None
        or not isinstance(data, JsonRPCResponseMessage)
        or type(data.result) is not dict
    ):
        return False
    message = {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
    body = json_bytes(message, serialize)
    header = (
        f"Content-Length: {len(body)}\r\nContent-Type: {content_type}; charset={charset}\r\n\r\n"
    ).encode("ascii")
    if isinstance(body, bytearray):
        body[0:0] = header  # in place: a large reply is not copied again to frame it
        # Both connections' writes take any bytes-like object (stdio writes a memoryview of
        # it, the daemon's transport copies what it cannot send at once).
        writer.write(cast(bytes, body))
    else:
        writer.write(header + body)
    return True


@functools.cache
def converter() -> Any:
    """pygls's converter, but custom methods get their params as the plain JSON they were.

    One for the whole process: it holds no per-connection state, and building one per
    connection cost each daemon client about 0.25 MB.
    """
    converter = pygls_converter()  # type: ignore[no-untyped-call]
    for message_type in (JsonRPCRequestMessage, JsonRPCNotification):
        fields = [field.name for field in attrs.fields(message_type)]
        converter.register_structure_hook(
            message_type,
            lambda data, cls, fields=fields: cls(**{name: data.get(name) for name in fields}),
        )
    return converter
