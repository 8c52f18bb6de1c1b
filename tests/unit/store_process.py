"""Another process using a store, for the tests of reading beside it (test_store_reads.py).

Usage: python store_process.py BACKEND DATA_DIR, then one command per line on stdin, each
answered with one line on stdout:

    save NAME   save a record called NAME through the backend     -> saved REVISION
    lock        take the store's write lock and keep it: SQLite, an IMMEDIATE transaction
                on the database; files, the flock on .memory.lock  -> locked
    crash       exit at once, closing nothing, as a killed process -> (no answer)
    close       close the store and exit                           -> closed
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType

ACTOR = Actor(kind=ActorKind.HUMAN, detail="other process")


async def serve(backend: str, data: Path) -> None:
    storage = await open_storage(Settings(root=data, data_dir=data, backend=backend))
    held: list[object] = []
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "save":
            content = RecordContent(
                name=argument, type=RecordType.PROJECT, description="d", body=f"body {argument}"
            )
            record = await storage.save_record(content, actor=ACTOR, at=datetime.now(UTC))
            answer(f"saved {record.revision}")
        elif command == "lock" and backend == "sqlite":
            connection = sqlite3.connect(data / "memory.db", isolation_level=None)
            connection.execute("BEGIN IMMEDIATE")
            held.append(connection)
            answer("locked")
        elif command == "lock":
            descriptor = os.open(data / ".memory.lock", os.O_RDWR | os.O_CREAT)
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            held.append(descriptor)
            answer("locked")
        elif command == "crash":
            os._exit(0)
        elif command == "close":
            break
    await storage.aclose()
    answer("closed")


def answer(text: str) -> None:
    print(text, flush=True)


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], Path(sys.argv[2])))
