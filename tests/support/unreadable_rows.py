"""Rows a backend cannot read, written behind its back as another tool, an older version or a
hand would: raw SQL for SQLite and PostgreSQL, a raw line for the files backend.

Each damage leaves the named record's latest row in a form this version does not read; the
reason is what every backend says of it (adapters/row_checks.py).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import asyncpg

from lazy_memory.adapters.config import Settings

REASONS = {
    "type": "its type 'weird' is not one of user, feedback, project, reference",
    "revision": "its revision 0 is not a whole number from 1 up",
    "time": "its time 'yesterday' is not a date and time with its offset from UTC",
    "text": "its description is not valid UTF-8 text",
}
"""Each damage, and why a backend says the record cannot be read."""
LATIN_1 = b"caf\xe9"
"""A description in Latin-1, as an older tool might have written it: not UTF-8."""
_SQLITE = {
    "type": "UPDATE records SET type = 'weird' WHERE name = ?",
    "revision": "UPDATE records SET revision = 0 WHERE name = ?",
    "time": "UPDATE records SET updated_at = 'yesterday' WHERE name = ?",
    "text": f"UPDATE records SET description = CAST(X'{LATIN_1.hex()}' AS TEXT) WHERE name = ?",
}
POSTGRES_DAMAGES = {
    "type": "UPDATE lazy_records SET type = 'weird' WHERE project = $1 AND name = $2",
    "revision": "UPDATE lazy_records SET revision = 0 WHERE project = $1 AND name = $2",
}
"""The damages a PostgreSQL UTF8 database can hold: no text that is not UTF-8, no
TIMESTAMPTZ that is not a time."""


async def damage(settings: Settings, name: str, kind: str) -> None:
    """Leave name's latest row in the store settings open in the form kind says."""
    if settings.backend == "sqlite":
        damage_sqlite(settings.data_dir / "memory.db", name, kind)
    elif settings.backend == "remote":
        # The daemon of the conformance suite serves a SQLite store of its own.
        damage_sqlite(settings.root / "daemon-data" / "memory.db", name, kind)
    elif settings.backend == "files":
        damage_files(settings.data_dir, name, kind)
    else:
        assert settings.pg_dsn is not None
        await damage_postgres(settings.pg_dsn, settings.project, name, kind)


def damage_sqlite(path: Path, name: str, kind: str) -> None:
    """The SQLite way: the records table's row changed in place."""
    connection = sqlite3.connect(path)
    try:
        with connection:
            assert connection.execute(_SQLITE[kind], (name,)).rowcount == 1
    finally:
        connection.close()


async def damage_postgres(dsn: str, project: str | None, name: str, kind: str) -> None:
    """The PostgreSQL way: the lazy_records row changed in place."""
    connection = await asyncpg.connect(dsn)
    try:
        assert await connection.execute(POSTGRES_DAMAGES[kind], project, name) == "UPDATE 1"
    finally:
        await connection.close()


def damage_files(data_dir: Path, name: str, kind: str) -> None:
    """The files way: a line appended to the history, as the name's next entry."""
    history = data_dir / "memory-history.json"
    lines = [json.loads(line) for line in history.read_bytes().splitlines() if line.strip()]
    entry = [line for line in lines if line["name"] == name][-1]
    entry["revision"] += 1
    if kind == "type":
        entry["type"] = "weird"
    elif kind == "revision":
        entry["revision"] = 0
    elif kind == "time":
        entry["at"] = "yesterday"
    line = json.dumps(entry, ensure_ascii=False).encode("utf-8")
    if kind == "text":
        line = line.replace(json.dumps(entry["description"]).encode(), b'"' + LATIN_1 + b'"')
    with history.open("ab") as file:
        file.write(line + b"\n")
