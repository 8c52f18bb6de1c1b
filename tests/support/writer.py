"""A writer process for the concurrency and crash tests.

Usage: python writer.py PREFIX COUNT SHARED_NAMES [BODY_BYTES]

Opens the store named by LAZY_STORAGE and LAZY_DATA and saves COUNT records (0: until
killed), alternating between its own names and SHARED_NAMES names every writer shares.
After each acknowledged save it prints one JSON line: name, revision and body. Each body is
padded to at least BODY_BYTES (default 0), so a kill can land in the middle of a big write.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import load_settings
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType

WRITER = Path(__file__)
"""This script, which the tests start as a process of its own."""


def body_for(prefix: str, step: int, body_bytes: int = 0) -> str:
    """The body a writer saves at step: who wrote it and when, padded to body_bytes."""
    body = f"{prefix} step {step}"
    padding = max(body_bytes - len(body), 0)
    return body + (" pad" * (padding // 4 + 1))[:padding]


async def write(prefix: str, count: int, shared_names: int, body_bytes: int = 0) -> None:
    storage = await open_storage(load_settings())
    actor = Actor(kind=ActorKind.BUILDER, detail=prefix)
    steps = range(count) if count else itertools.count()
    try:
        for step in steps:
            if shared_names and step % 2 == 0:
                name = f"shared-{step // 2 % shared_names}"
            else:
                name = f"{prefix}-{step}"
            body = body_for(prefix, step, body_bytes)
            content = RecordContent(
                name=name, type=RecordType.PROJECT, description=f"written by {prefix}", body=body
            )
            record = await storage.save_record(content, actor=actor, at=datetime.now(UTC))
            line = json.dumps({"name": name, "revision": record.revision, "body": body})
            print(line, flush=True)
    finally:
        await storage.aclose()


if __name__ == "__main__":
    body_bytes = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    asyncio.run(write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), body_bytes))
