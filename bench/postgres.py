"""PostgreSQL for the benchmark: a scratch server when none is given, and stores loaded in bulk.

With LAZY_PG_DSN set, the run uses that database. Without it, and with PostgreSQL's server
binaries installed, `scratch_postgres` starts a cluster of its own in the run's temporary
folder for the run's duration, as the tests start theirs (tests/support/postgres.py: initdb and
pg_ctl, trust authentication, no fsync, as the `postgres` user under root), and points
LAZY_PG_DSN at it, so every store's environment and every `lazy` process it spawns reach it.
With neither, postgres cannot join: `postgres_unavailable` says why and `not_measured` makes
that the report's row, so the backend is never dropped silently.

`bulk_load` writes a corpus into a store whose schema the backend has already created, in
one transaction, as the backend's own write path would leave it (see its docstring).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import asyncpg

from bench.report import Measurement, missing
from lazy_memory.adapters import BACKENDS
from lazy_memory.adapters.postgres.text import stored
from lazy_memory.adapters.postgres.writes import UPSERT_RECORD, search_values
from lazy_memory.adapters.sql_rows import HISTORY_COLUMNS
from lazy_memory.engine.records import HistoryEntry

# The tests' server, so that the bench and the tests start PostgreSQL alike.
from tests.support.postgres import postgres_binaries, start_cluster

DSN_VARIABLE = "LAZY_PG_DSN"

_INSERT_HISTORY = (
    f"INSERT INTO lazy_history (project, seq, {HISTORY_COLUMNS}) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
)
"""A history entry with its number given: the backend's APPEND_HISTORY takes the next number
from the project's counter row, and 100,000 updates of one row in one transaction would each
walk the row's ever longer chain of versions."""


def postgres_unavailable() -> str | None:
    """Why the postgres backend cannot join a run here, or None when it can."""
    if "postgres" not in BACKENDS:
        return "this lazy-memory has no postgres backend"
    if os.environ.get(DSN_VARIABLE) or postgres_binaries() is not None:
        return None
    return (
        f"{DSN_VARIABLE} is not set and no PostgreSQL server binaries (initdb, pg_ctl) were "
        "found to start a scratch server (Debian: apt-get install postgresql)"
    )


def not_measured() -> list[Measurement]:
    """A `missing` row for the postgres backend when it cannot join, else nothing."""
    reason = postgres_unavailable()
    return [] if reason is None else [missing("postgres backend", "postgres", 0, reason)]


@contextmanager
def scratch_postgres(workdir: Path, backends: Sequence[str]) -> Iterator[str | None]:
    """The DSN the run's postgres stores use while the block runs; None without postgres.

    LAZY_PG_DSN, if set, is used as it is. Otherwise a scratch cluster is started under
    workdir, LAZY_PG_DSN points at it for the block's duration, and it is stopped afterwards
    (its files go with workdir).
    """
    given = os.environ.get(DSN_VARIABLE)
    if "postgres" not in backends or given:
        yield given if "postgres" in backends else None
        return
    binaries = postgres_binaries()
    if binaries is None:
        raise RuntimeError(postgres_unavailable())
    directory = workdir / "postgres"
    directory.mkdir()
    if os.geteuid() == 0:
        # The server runs as `postgres`, which must pass through the run's private folder.
        workdir.chmod(workdir.stat().st_mode | stat.S_IXOTH)
    server = start_cluster(binaries, directory)
    os.environ[DSN_VARIABLE] = server.dsn
    try:
        yield server.dsn
    finally:
        if given is None:
            del os.environ[DSN_VARIABLE]
        else:
            os.environ[DSN_VARIABLE] = given
        server.stop()


async def bulk_load(dsn: str, project: str, entries: Sequence[HistoryEntry]) -> None:
    """Write entries (each a record's first and only revision) to project in one transaction.

    The project's schema and counter row must exist (any write through the backend makes
    them). Each record row is the backend's own UPSERT_RECORD, its search columns computed by
    the backend's search_columns; the history entries are numbered 1, 2, ... in order and
    the counter row ends at the last number, as saving the entries one by one would leave
    them. Nothing is announced: no one listens yet. Then VACUUM ANALYZE, so the planner and
    the visibility map see the store as autovacuum would soon after such a load.
    """
    connection = await asyncpg.connect(dsn)
    try:
        async with connection.transaction():
            await connection.executemany(
                UPSERT_RECORD, [_record_arguments(project, entry) for entry in entries]
            )
            await connection.executemany(
                _INSERT_HISTORY,
                [_history_arguments(project, seq, entry) for seq, entry in enumerate(entries, 1)],
            )
            await connection.execute(
                "UPDATE lazy_projects SET last_seq = last_seq + $2 WHERE project = $1",
                project,
                len(entries),
            )
        await connection.execute("VACUUM ANALYZE lazy_records, lazy_history, lazy_projects")
    finally:
        await connection.close()


def _shared_arguments(entry: HistoryEntry) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """The values leading and trailing both rows' columns, as postgres/writes.py append passes
    them (RECORD_COLUMNS and HISTORY_COLUMNS differ only in between)."""
    provenance = None if entry.provenance is None else entry.provenance.model_dump_json()
    leading = (
        stored(entry.name),
        entry.type.value,
        stored(entry.description),
        stored(entry.body),
        entry.revision,
    )
    return leading, (entry.actor.kind.value, stored(entry.actor.detail), provenance)


def _record_arguments(project: str, entry: HistoryEntry) -> tuple[object, ...]:
    leading, trailing = _shared_arguments(entry)
    return (project, *leading, entry.at, *trailing, False, *search_values(entry))


def _history_arguments(project: str, seq: int, entry: HistoryEntry) -> tuple[object, ...]:
    leading, trailing = _shared_arguments(entry)
    return (project, seq, *leading, entry.operation.value, entry.at, *trailing)
