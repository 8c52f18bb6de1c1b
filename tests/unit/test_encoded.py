"""Large replies written in pieces (wire/encoded.py) are byte for byte what json.dumps and
pygls would have sent, whatever the text, wherever a slice or batch boundary falls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

from lazy_memory.rpc.jsonrpc.server import EngineServer, Session
from lazy_memory.wire import encoded
from lazy_memory.wire.encoded import json_array, json_bytes

# Escapes at every slice boundary: quotes, controls, non-ASCII, an astral character (a
# surrogate pair in JSON), a lone surrogate, separators JSON leaves as they are.
AWKWARD = 'a"b\\c\n\t\x00é日🚀\ud800\u2028z' * 5


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of 7 characters and 3 items, so small values are written in many pieces."""
    monkeypatch.setattr(encoded, "PIECE_CHARS", 7)
    monkeypatch.setattr(encoded, "LIST_SLICE", 3)


@pytest.mark.parametrize(
    "value",
    [
        {"text": AWKWARD, "n": 1},
        {"result": {"hits": [{"name": AWKWARD, "score": 1.5}] * 8, "more": False}},
        {"id": 1, "result": {"entries": list(range(10)), "none": None, "empty": []}},
        {"a": {"b": {"c": {"d": AWKWARD}}}},
        [AWKWARD, AWKWARD],
        AWKWARD,
        {1: AWKWARD, "k": "v"},
        {},
        "short",
    ],
)
def test_a_value_is_written_as_json_dumps_writes_it(value: Any) -> None:
    assert bytes(json_bytes(value)) == json.dumps(value).encode("ascii")


@pytest.mark.parametrize("batches", [[], [[]], [[1, 2], [], [3]], [[{"x": AWKWARD}], [4]]])
def test_an_array_written_in_batches_is_the_whole_array(batches: list[list[Any]]) -> None:
    items = [item for batch in batches for item in batch]

    assert bytes(json_array(batches).buffer) == json.dumps(items).encode("ascii")


@pytest.mark.parametrize("before", ["", "x" * 10_000])
def test_an_encoded_value_is_spliced_in_whichever_buffer_is_larger(before: str) -> None:
    entries = [{"name": f"n{number}", "text": AWKWARD} for number in range(5)]
    message = {
        "id": 7,
        "before": before,
        "result": {"records": json_array([entries[:2], entries[2:]])},
    }
    expected = {"id": 7, "before": before, "result": {"records": entries}}

    assert bytes(json_bytes(message)) == json.dumps(expected).encode("ascii")


def test_a_reply_is_sent_as_pygls_would_send_it() -> None:
    sent: list[bytes] = []
    server = EngineServer(Session(None, lambda _: None, lambda _: None))  # type: ignore[arg-type]
    protocol = server.protocol
    protocol.set_writer(type("Writer", (), {"write": lambda _, data: sent.append(bytes(data))})())
    result = {"text": AWKWARD * 10, "records": [{"name": AWKWARD}] * 10, "page": None}

    protocol._send_data(JsonRPCResponseMessage(id=3, jsonrpc="2.0", result=result))
    LanguageServerProtocol._send_data(
        protocol, JsonRPCResponseMessage(id=3, jsonrpc="2.0", result=result)
    )

    ours, pygls = sent
    assert ours == pygls
    assert ours.startswith(b"Content-Length: ")


def test_an_encoded_value_is_for_one_message() -> None:
    records = json_array([[1, 2]])
    json_bytes({"records": records})

    assert records.buffer == bytearray()
