"""Benchmark fixtures: a project folder whose store holds the realistic corpus at a size.

The corpus is what `fill_store` would write (one revision per record, a minute apart, as the
corpus actor), but the embedded backends get it in bulk, because saving 100,000 records one
by one would take most of the run:

- sqlite: a first write (clearing the empty compact slot) creates and migrates the database,
  then one transaction inserts every row, as `SqliteStorage` lays rows out (the records
  table and the history).
- files: `memory-history.json`, the backend's source of truth, is written once in its own
  format (one history entry per line, as JSON); the backend's journal then writes the
  `memories.json` checkpoint from it, as a write would, so it derives its own index.
- postgres (LAZY_PG_DSN, or the run's scratch server: bench/postgres.py): a first write
  creates and migrates the schema and the project's counter row, then one transaction
  inserts every record with the backend's own statement and search columns, and the history
  numbered in order (bench/postgres.py's bulk_load).

A store is built once per run and, for an embedded backend, copied (a folder copy) before
anything writes to it; a postgres store is the same rows for everything measured at its size.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from bench.corpus import CORPUS_ACTOR, CORPUS_START, realistic_records
from bench.postgres import bulk_load, postgres_unavailable
from lazy_memory.adapters import BACKENDS, open_storage
from lazy_memory.adapters.config import Settings, load_settings
from lazy_memory.adapters.files.journal import Journal
from lazy_memory.engine.records import HistoryEntry, Operation

EMBEDDED_BACKENDS = ("sqlite", "files")
"""The backends that need nothing but a folder."""

POSTGRES_MAX_RECORDS = 100_000
"""The largest PostgreSQL store a run builds: the largest size any target is set at."""

_CLEARED_VARIABLES = ("LAZY_ACTOR", "LAZY_TASK_ID", "LAZY_REMOTE", "LAZY_TOKEN", "LAZY_TLS_CA")


@dataclass(frozen=True)
class Store:
    """A project folder (a git root) and the store its `lazy` commands and engines open."""

    backend: str
    records: int
    root: Path

    @property
    def data_dir(self) -> Path:
        """The folder LAZY_DATA points at."""
        return self.root / ".lazy"

    def environment(self, **extra: str) -> dict[str, str]:
        """The process environment that opens this store, as a builder with no task id."""
        environment = {
            name: value for name, value in os.environ.items() if name not in _CLEARED_VARIABLES
        }
        environment.update(
            LAZY_DATA=str(self.data_dir),
            LAZY_STORAGE=self.backend,
            LAZY_ACTOR="bench",
            LAZY_OFFLINE="1",
            # One database holds many projects: this run's stores get keys of their own.
            LAZY_PROJECT=f"{self.root.parent.name}-{self.root.name}",
        )
        return environment | extra


def available_backends(scratch: bool = False) -> list[str]:
    """The embedded backends, and postgres when LAZY_PG_DSN is set and the backend exists.

    With scratch, postgres also when a scratch server can be started: for a caller that runs
    inside bench.postgres.scratch_postgres.
    """
    backends = list(EMBEDDED_BACKENDS)
    if "postgres" in BACKENDS and (
        os.environ.get("LAZY_PG_DSN") or (scratch and postgres_unavailable() is None)
    ):
        backends.append("postgres")
    return backends


def corpus_history(count: int, seed: int = 0) -> list[HistoryEntry]:
    """The history fill_store would leave: realistic_records saved once each, a minute apart."""
    return [
        HistoryEntry(
            **content.model_dump(),
            revision=1,
            operation=Operation.SAVE,
            actor=CORPUS_ACTOR,
            at=CORPUS_START + timedelta(minutes=index),
        )
        for index, content in enumerate(realistic_records(count, seed))
    ]


async def build_store(backend: str, records: int, parent: Path) -> Store:
    """A new project folder under parent holding the corpus of that size in backend."""
    store = Store(backend, records, parent / f"{backend}-{records}")
    (store.root / ".git").mkdir(parents=True)
    if backend == "sqlite":
        await _build_sqlite(store)
    elif backend == "files":
        await _build_files(store)
    else:
        await _build_postgres(store)
    return store


def copy_store(store: Store, parent: Path, label: str) -> Store:
    """A private copy of store to write to (the same store for a server backend)."""
    if store.backend not in EMBEDDED_BACKENDS:
        return store
    copy = replace(store, root=parent / f"{store.root.name}-{label}")
    shutil.copytree(store.root, copy.root)
    return copy


async def history_revisions(store: Store) -> set[tuple[str, int]]:
    """(name, revision) of every write the store's history holds, read through its backend."""
    storage = await open_storage(_settings(store))
    try:
        return {(entry.name, entry.revision) for entry in await storage.history()}
    finally:
        await storage.aclose()


def _settings(store: Store) -> Settings:
    return load_settings(store.root, store.environment())


async def _first_write(store: Store) -> None:
    """A write that changes no record: the backend creates its store and applies every
    migration, so the schema is the real one."""
    storage = await open_storage(_settings(store))
    try:
        await storage.clear_compact()
    finally:
        await storage.aclose()


async def _build_postgres(store: Store) -> None:
    await _first_write(store)
    settings = _settings(store)
    if settings.pg_dsn is None:
        raise RuntimeError("a postgres store needs LAZY_PG_DSN")
    await bulk_load(settings.pg_dsn, settings.project_key, corpus_history(store.records))


async def _build_sqlite(store: Store) -> None:
    await _first_write(store)
    rows = [_sqlite_row(entry) for entry in corpus_history(store.records)]
    connection = sqlite3.connect(store.data_dir / "memory.db", isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO records (name, type, description, body, revision, deleted, updated_at, "
            "actor_kind, actor_detail, provenance) "
            "VALUES (:name, :type, :description, :body, :revision, 0, :at, :actor_kind, "
            ":actor_detail, NULL)",
            rows,
        )
        connection.executemany(
            "INSERT INTO history (name, type, description, body, revision, operation, at, "
            "actor_kind, actor_detail, provenance) "
            "VALUES (:name, :type, :description, :body, :revision, :operation, :at, "
            ":actor_kind, :actor_detail, NULL)",
            rows,
        )
        connection.execute("COMMIT")
    finally:
        connection.close()


def _sqlite_row(entry: HistoryEntry) -> Mapping[str, object]:
    return {
        "name": entry.name,
        "type": entry.type.value,
        "description": entry.description,
        "body": entry.body,
        "revision": entry.revision,
        "operation": entry.operation.value,
        "at": entry.at.isoformat(),
        "actor_kind": entry.actor.kind.value,
        "actor_detail": entry.actor.detail,
    }


async def _build_files(store: Store) -> None:
    store.data_dir.mkdir(parents=True)
    lines = (entry.model_dump_json() + "\n" for entry in corpus_history(store.records))
    (store.data_dir / "memory-history.json").write_text("".join(lines), encoding="utf-8")
    journal = Journal(store.data_dir)
    try:
        journal.checkpoint()
    finally:
        journal.close()
