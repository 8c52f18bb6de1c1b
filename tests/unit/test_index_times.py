"""The index entry's write time where a backend keeps it apart from the record: in the files
backend's checkpoint (and without it, in an older one), and on the wire."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.files.index import CHECKPOINT_MIN_ENTRIES
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import RecordType
from lazy_memory.wire.index import index_entries, index_json
from tests.unit.store_reading import (
    ALICE,
    T0,
    content,
    settings,
)


async def test_the_files_index_times_survive_a_checkpoint_and_an_old_one_is_replayed(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    storage = await open_storage(settings("files", data))
    try:
        for number in range(CHECKPOINT_MIN_ENTRIES + 5):
            at = T0 + timedelta(seconds=number, microseconds=number)
            await storage.save_record(content(f"record-{number:03}"), actor=ALICE, at=at)
        expected = [(record.name, record.updated_at) for record in await storage.list_records()]
    finally:
        await storage.aclose()
    checkpoint = json.loads((data / "memories.json").read_bytes())
    assert len(checkpoint["times"]) == len(checkpoint["names"])

    async def index_times() -> list[tuple[str, datetime]]:
        reopened = await open_storage(settings("files", data))
        try:
            return [(entry.name, entry.updated_at) for entry in await reopened.list_index()]
        finally:
            await reopened.aclose()

    assert await index_times() == expected
    # A checkpoint an older version wrote has no times: the history is replayed instead.
    del checkpoint["times"]
    (data / "memories.json").write_text(json.dumps(checkpoint))
    assert await index_times() == expected


def test_index_entries_cross_the_wire_and_a_malformed_one_is_refused() -> None:
    at = T0 + timedelta(microseconds=7)
    entries = [
        IndexEntry("a", RecordType.USER, "d", 2, at),
        IndexEntry("b", RecordType.REFERENCE, "d", 1, at),
    ]
    sent = json.loads(json.dumps(index_json(entries)))

    assert index_entries(sent) == entries
    good = {"name": "a", "type": "user", "description": "d", "revision": 2}
    for bad in (
        [good],
        [["a", "user", "d", 2, "2026-11-30T08:00:00+00:00"]],
        [{**good, "type": "nonsense", "updated_at": "2026-11-30T08:00:00+00:00"}],
        [{**good, "revision": "2", "updated_at": "2026-11-30T08:00:00+00:00"}],
        [{**good, "updated_at": "yesterday"}],
        [{**good, "updated_at": "2026-11-30T08:00:00"}],
    ):
        with pytest.raises((ValueError, TypeError, KeyError)):
            index_entries(bad)
