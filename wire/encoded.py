"""JSON written piece by piece into one buffer: a large message serialized once, in place.

`json.dumps` builds a message as one string, which is then encoded and framed, each a copy of
the whole: at 100,000 records the 24 MB index reply cost over 70 MB at once, besides the
models and dicts it was made from. json_bytes writes exactly the bytes `json.dumps` with its
defaults gives (ASCII, `", "` and `": "` separators), but into one growing buffer, so the
message is held once, as bytes:

- an Encoded value (JSON a producer wrote itself, say an index batch by batch as the store
  read it) is taken over as it is: its buffer becomes the message's;
- a long string is escaped a slice at a time (JSON escapes each character on its own, so the
  slices' escapes joined are the whole one's);
- a long list is written a slice of items at a time, and a dict holding either item by item;
- everything else is one `json.dumps` call.

A message with nothing large in it is one `json.dumps` call, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

PIECE_CHARS = 256 * 1024
"""A string longer than this is written in slices of this many characters."""
LIST_SLICE = 1_000
"""A list longer than this is written this many items at a time."""
_DEPTH = 3
"""How deep into dicts large values are looked for: a reply, its result, what that holds."""

Default = Callable[[Any], Any]
"""json.dumps's `default`: what a value JSON cannot write is written as instead."""


class Encoded:
    """A JSON value already written as `json.dumps` writes it, in one buffer of ASCII bytes.

    Writing a message that holds it takes the buffer over, so it is written once: an Encoded
    value is for one message.
    """

    __slots__ = ("buffer",)

    def __init__(self, buffer: bytearray) -> None:
        self.buffer = buffer


def json_array(batches: Iterable[list[Any]]) -> Encoded:
    """A JSON array of every item of batches (plain JSON values), written a batch at a time."""
    buffer = bytearray(b"[")
    for batch in batches:
        if batch:
            if len(buffer) > 1:
                buffer += b", "
            buffer += json.dumps(batch)[1:-1].encode("ascii")
    buffer += b"]"
    return Encoded(buffer)


def json_bytes(value: Any, default: Default | None = None) -> bytes | bytearray:
    """value as `json.dumps(value, default=default)` writes it, encoded.

    Bytes from one `json.dumps` call when value holds nothing large; else a bytearray written
    piece by piece, never whole as a string.
    """
    if not _is_large(value, 0):
        return json.dumps(value, default=default).encode("ascii")
    writer = _Writer(default)
    writer.value(value, 0)
    return writer.buffer


def _is_large(value: Any, depth: int) -> bool:
    """True if value holds something json_bytes writes in pieces."""
    if isinstance(value, Encoded):
        return True
    if isinstance(value, str):
        return len(value) > PIECE_CHARS
    if isinstance(value, list):
        return len(value) > LIST_SLICE
    if isinstance(value, dict) and depth < _DEPTH:
        return all(type(key) is str for key in value) and any(
            _is_large(item, depth + 1) for item in value.values()
        )
    return False


class _Writer:
    """The buffer a large message is written into, and how each value goes in."""

    def __init__(self, default: Default | None) -> None:
        self.buffer = bytearray()
        self._default = default

    def value(self, value: Any, depth: int) -> None:
        if isinstance(value, Encoded):
            self._take_over(value)
        elif isinstance(value, str) and len(value) > PIECE_CHARS:
            self._text('"')
            for start in range(0, len(value), PIECE_CHARS):
                self._text(self._dumps(value[start : start + PIECE_CHARS])[1:-1])
            self._text('"')
        elif isinstance(value, list) and len(value) > LIST_SLICE:
            self._text("[")
            for start in range(0, len(value), LIST_SLICE):
                self._text(", " if start else "")
                self._text(self._dumps(value[start : start + LIST_SLICE])[1:-1])
            self._text("]")
        elif isinstance(value, dict) and _is_large(value, depth):
            separator = "{"
            for key, item in value.items():
                self._text(f"{separator}{self._dumps(key)}: ")
                self.value(item, depth + 1)
                separator = ", "
            self._text("}")
        else:
            self._text(self._dumps(value))

    def _take_over(self, encoded: Encoded) -> None:
        """Append encoded's JSON: into its own buffer when that is the larger, in place."""
        taken, encoded.buffer = encoded.buffer, bytearray()
        if len(taken) > len(self.buffer):
            taken[0:0] = self.buffer
            self.buffer = taken
        else:
            self.buffer += taken

    def _dumps(self, value: Any) -> str:
        return json.dumps(value, default=self._default)

    def _text(self, text: str) -> None:
        self.buffer += text.encode("ascii")
