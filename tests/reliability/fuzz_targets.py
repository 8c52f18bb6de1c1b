"""atheris fuzz targets: the query parser, the front-matter reader, the message framing.

Run one target for a fixed number of inputs (test_fuzz.py does, in a subprocess)::

    python -m tests.reliability.fuzz_targets query -runs=20000 -artifact_prefix=out/ [corpus]

Each target lets only the typed errors of what it drives escape; anything else is a crash,
which libFuzzer reports with the input that caused it (saved under -artifact_prefix) and a
non-zero exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any

import atheris

with atheris.instrument_imports(include=["lazy_memory"]):
    from pydantic import ValidationError

    from lazy_memory.adapters.claude_code.front_matter import parse_memory
    from lazy_memory.engine.errors import InvalidQuery
    from lazy_memory.engine.importing import HarnessScan, plan_import
    from lazy_memory.engine.records import RecordContent, RecordType
    from lazy_memory.engine.search_parser import parse_query
    from lazy_memory.engine.search_ranking import SearchIndex
    from lazy_memory.rpc.jsonrpc.methods import METHODS
    from lazy_memory.rpc.jsonrpc.storage_methods import STORAGE_METHODS
    from lazy_memory.wire.framing import FramingError, read_messages

_INDEX = SearchIndex(
    [
        RecordContent(
            name="deploy-steps",
            type=RecordType.PROJECT,
            description="How we deploy",
            body="Run make deploy, then check the x-ray dashboard. \x00 İstanbul",
        ),
        RecordContent(
            name="sql",
            type=RecordType.USER,
            description="'; DROP TABLE records; --",
            body='" OR 1=1 -- NEAR(a b) * ^c',
        ),
    ]
)
_LOOP = asyncio.new_event_loop()


def query(data: bytes) -> None:
    """Any text is a query, or an InvalidQuery whose message is one line."""
    text = atheris.FuzzedDataProvider(data).ConsumeUnicode(len(data))
    try:
        parsed = parse_query(text)
    except InvalidQuery as error:
        if error.message.splitlines() != [error.message]:
            raise AssertionError(f"a message of several lines: {error.message!r}") from None
        return
    for hit in _INDEX.search(parsed, 20):
        if hit.snippet.splitlines() not in ([hit.snippet], []):
            raise AssertionError(f"a snippet of several lines: {hit.snippet!r}")


def front_matter(data: bytes) -> None:
    """Any UTF-8 file is a memory whose body is verbatim; the planner never raises."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # the reader skips such a file before parsing (tested end to end elsewhere)
    scan = HarnessScan()
    memory = parse_memory("fuzzed.md", text, 0.0, scan)
    if not text.endswith(memory.body):
        raise AssertionError("the body is not the file's text after its front matter")
    scan.memories.append(memory)
    plan_import(scan, existing=[])


def framing(data: bytes) -> None:
    """Any bytes are messages, JSON-RPC errors, or a FramingError; params validate or refuse."""
    delivered: list[dict[str, Any]] = []
    _LOOP.run_until_complete(_read(data, delivered))
    for message in delivered:
        json.dumps(message)
        method = message.get("method")
        table = METHODS.get(method) or STORAGE_METHODS.get(method)  # type: ignore[arg-type]
        if table is not None:
            params = message.get("params")
            with contextlib.suppress(ValidationError):
                table.params.model_validate({} if params is None else params)


async def _read(data: bytes, delivered: list[dict[str, Any]]) -> None:
    reader = asyncio.StreamReader(limit=64 * 1024)
    reader.feed_data(data)
    reader.feed_eof()

    def reply_error(message_id: Any, code: int, text: str) -> None:
        json.dumps({"id": message_id, "error": {"code": code, "message": text}})

    with contextlib.suppress(FramingError):
        await read_messages(reader, delivered.append, reply_error)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "query": query,
    "front-matter": front_matter,
    "framing": framing,
}


def main() -> None:
    """`python -m tests.reliability.fuzz_targets TARGET [libFuzzer flags] [corpus dirs]`."""
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
