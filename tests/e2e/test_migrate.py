"""`lazy memory migrate`: a store round-trips sqlite -> postgres -> files -> sqlite unchanged."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Operation,
    Provenance,
    RecordContent,
    RecordType,
)
from tests.e2e.conftest import Lazy
from tests.support.actors import ALICE, BUILDER, IMPORTER
from tests.support.clocks import T0_WITH_MICROSECONDS
from tests.support.postgres import PostgresServer, fresh_project

BULK = 60
"""Enough entries for the progress bar."""


async def fill(storage: Storage) -> None:
    """A history with every kind of entry a store can hold."""
    clock = iter(
        T0_WITH_MICROSECONDS + timedelta(seconds=second, microseconds=second)
        for second in range(999)
    )
    imported = RecordContent(
        name="Harness Note_1",
        type=RecordType.PROJECT,
        description="Imported verbatim, " + "long " * 60,
        body="from the harness",
        provenance=Provenance(source="/home/a/x.md", session_id="0f3c", original_type="opinion"),
    )
    await storage.save_record(imported, actor=IMPORTER, at=next(clock), operation=Operation.IMPORT)
    for step in range(BULK):
        content = RecordContent(
            name=f"bulk-{step % 7}",
            type=RecordType.REFERENCE,
            description=f"bulk record, step {step}",
            body=f"step {step}",
        )
        await storage.save_record(content, actor=BUILDER, at=next(clock))
    odd = RecordContent(
        name="odd-text",
        type=RecordType.USER,
        description="emoji 🧠 and CJK 記憶",
        body="control \x00\x01 characters, \uffff, quotes ' \" and \\ backslashes",
    )
    await storage.save_record(odd, actor=ALICE, at=next(clock))
    await storage.remove_record("bulk-3", actor=ALICE, at=next(clock))
    await storage.remove_record("odd-text", actor=ALICE, at=next(clock))
    await storage.save_record(odd, actor=BUILDER, at=next(clock))
    await storage.put_compact(
        Compact(
            preamble="Memory summary",
            summary="- bulk-0 (reference): bulk record",
            generator="mechanical",
            generated_at=next(clock),
            generated_by=ALICE,
            watermark=await storage.live_revisions(),
        )
    )


async def everything(settings: Settings) -> tuple[Any, ...]:
    """All a store holds: live records, full history, revisions, tombstones and the compact."""
    storage = await open_storage(settings)
    try:
        names = {entry.name: entry.revision for entry in await storage.history()}
        return (
            await storage.list_records(),
            await storage.history(),
            await storage.live_revisions(),
            await storage.removed_since(names),
            await storage.get_compact(),
        )
    finally:
        await storage.aclose()


async def test_a_store_round_trips_through_every_database_backend_and_reruns_are_no_ops(
    lazy: Lazy, project: Path, tmp_path: Path, postgres_server: PostgresServer
) -> None:
    key = fresh_project("migrate")
    dsn = postgres_server.dsn
    stores = {
        "sqlite": Settings(root=project, data_dir=tmp_path / "first", backend="sqlite"),
        "postgres": Settings(
            root=project, data_dir=tmp_path / "unused", backend="postgres", pg_dsn=dsn, project=key
        ),
        "files": Settings(root=project, data_dir=tmp_path / "files", backend="files"),
        "sqlite again": Settings(root=project, data_dir=tmp_path / "last", backend="sqlite"),
    }
    source = await open_storage(stores["sqlite"])
    await fill(source)
    await source.aclose()
    original = await everything(stores["sqlite"])
    environments = {
        "sqlite": {"LAZY_DATA": str(tmp_path / "first")},
        "postgres": {"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": dsn},
        "files": {"LAZY_STORAGE": "files", "LAZY_DATA": str(tmp_path / "files")},
    }
    moves = [
        ("sqlite", ["--to", "postgres", "--to-dsn", dsn]),
        ("postgres", ["--to", "files", "--to-data", str(tmp_path / "files")]),
        ("files", ["--to", "sqlite", "--to-data", str(tmp_path / "last")]),
    ]
    entries = len(original[1])

    for run in ("first", "again"):
        for source_name, flags in moves:
            moved = lazy(
                "memory",
                "migrate",
                *flags,
                "--json",
                environment={**environments[source_name], "LAZY_PROJECT": key},
            )
            assert moved.returncode == 0, moved.stderr
            report = json.loads(moved.stdout)
            if run == "first":
                assert (report["copied"], report["compact"]) == (entries, "copied")
                assert f"copying: {entries}/{entries}\n" in moved.stderr  # not a terminal
            else:
                assert (report["copied"], report["compact"]) == (0, "unchanged")
                assert moved.stderr == ""

    for name, settings in stores.items():
        assert await everything(settings) == original, name


async def test_moving_into_a_store_with_another_history_is_refused_in_one_line(
    lazy: Lazy, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    for data, body in ((None, "here"), (target, "there")):
        environment = {} if data is None else {"LAZY_DATA": str(data)}
        saved = lazy(
            "memory",
            "save",
            "note",
            "-t",
            "user",
            "-d",
            "d",
            "--body",
            body,
            environment=environment,
        )
        assert saved.returncode == 0, saved.stderr

    refused = lazy("memory", "migrate", "--to", "sqlite", "--to-data", str(target))
    dry = lazy("memory", "migrate", "--to", "files", "--to-data", str(tmp_path / "f"), "--dry-run")

    assert refused.returncode == 5
    assert refused.stderr.startswith("lazy: error: the target already holds a different history")
    assert refused.stderr.count("\n") == 1
    shown = lazy("memory", "show", "note", "--json", environment={"LAZY_DATA": str(target)})
    assert json.loads(shown.stdout)["body"] == "there"
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == (
        "Would copy 1 of 1 history entries from sqlite to files; nothing was written (--dry-run).\n"
    )
    assert not (tmp_path / "f" / "memory-history.json").exists()


def test_flags_that_do_not_fit_the_target_are_usage_errors(lazy: Lazy) -> None:
    for flags, message in (
        (["--to", "files", "--to-dsn", "postgresql://h/d"], "--to-dsn is for --to postgres"),
        (["--to", "postgres", "--to-data", "x"], "--to-data is for --to sqlite or --to files"),
        (["--to", "postgres"], "--to postgres needs the database: give --to-dsn DSN"),
        (["--to", "sqlite"], "the target is the configured store itself: give --to-data DIR"),
    ):
        refused = lazy("memory", "migrate", *flags)
        assert (refused.returncode, refused.stderr) == (2, f"lazy: error: {message}\n")
