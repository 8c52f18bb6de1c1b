"""What the launch hook reads without the engine is what the engine reads (launch/state.py).

On both backends: the index, the compact and the names removed since it; a compact is read with
the json module only once its model has accepted that very compact (its digest trusted), and
never one the model would have to convert; and what only the engine can read raises NotRead.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage, read_launch_state
from lazy_memory.adapters.config import Settings
from lazy_memory.adapters.launch.state import NotRead
from lazy_memory.engine.compaction import mechanical_summary, new_compact
from lazy_memory.engine.launching import launch_state
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.clocks import T0


@pytest.fixture(params=["sqlite", "files"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return Settings(root=tmp_path, data_dir=tmp_path / "data", backend=request.param)


async def compacted(settings: Settings) -> None:
    """Five records, a compact of them, then one written, one updated, one removed since."""
    storage = await open_storage(settings)
    try:
        for number in range(5):
            content = RecordContent(
                name=f"n-{number}", type=RecordType.PROJECT, description=f"d {number}", body="b"
            )
            await storage.save_record(content, actor=ALICE, at=T0 + timedelta(minutes=number))
        records = await storage.list_index()
        compact = new_compact(
            records,
            mechanical_summary(records),
            generator="mechanical",
            model=None,
            generated_at=T0,
            generated_by=ALICE,
        )
        await storage.put_compact(compact)
        later = T0 + timedelta(hours=1)
        for name in ("fresh", "n-1"):
            content = RecordContent(name=name, type=RecordType.USER, description="new", body="b")
            await storage.save_record(content, actor=ALICE, at=later)
        await storage.remove_record("n-2", actor=ALICE, at=later)
    finally:
        await storage.aclose()


async def test_the_state_is_what_the_engine_reads(settings: Settings) -> None:
    await compacted(settings)
    storage = await open_storage(settings)
    try:
        engine = await launch_state(storage)
    finally:
        await storage.aclose()

    light = read_launch_state(settings, None)

    assert light.records == engine.records
    assert engine.compact is not None
    assert light.compact is not None
    assert (light.compact.summary, light.compact.watermark) == (
        engine.compact.summary,
        engine.compact.watermark,
    )
    assert light.removed == engine.removed == ["n-2"]
    assert light.compact_digest is not None


async def test_an_empty_store_reads_as_empty_and_creates_nothing(settings: Settings) -> None:
    state = read_launch_state(settings, None)

    assert state == ([], None, [], None, [])
    assert not settings.data_dir.exists()


def stored_compact(settings: Settings) -> str:
    if settings.backend == "sqlite":
        with sqlite3.connect(settings.data_dir / "memory.db") as connection:
            return str(connection.execute("SELECT content FROM compact").fetchone()[0])
    return (settings.data_dir / "memory-compact.json").read_text(encoding="utf-8")


def store_compact(settings: Settings, content: str) -> None:
    if settings.backend == "sqlite":
        with sqlite3.connect(settings.data_dir / "memory.db") as connection:
            connection.execute("UPDATE compact SET content = ?", (content,))
    else:
        (settings.data_dir / "memory-compact.json").write_text(content, encoding="utf-8")


async def test_a_compact_is_read_without_its_model_only_once_it_accepted_it(
    settings: Settings,
) -> None:
    await compacted(settings)
    # JSON whose summary and watermark read, in a compact the model refuses (no such time).
    refused = json.loads(stored_compact(settings)) | {"generated_at": "not a time"}
    store_compact(settings, json.dumps(refused))

    with pytest.raises(NotRead):
        read_launch_state(settings, None)  # the model is asked, and refuses it

    digest = read_launch_state(settings, _digest_of(settings)).compact_digest
    assert digest == _digest_of(settings)  # a digest the model accepted is taken at its word


async def test_a_compact_the_model_would_convert_is_its_to_read(settings: Settings) -> None:
    await compacted(settings)
    converted = json.loads(stored_compact(settings))
    converted["watermark"] = {
        name: str(revision) for name, revision in converted["watermark"].items()
    }
    store_compact(settings, json.dumps(converted))
    digest = _digest_of(settings)

    # The model reads "1" as 1; json does not: only the engine can read this compact right.
    with pytest.raises(NotRead):
        read_launch_state(settings, digest)


def test_another_backend_is_the_engine_s_to_read(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, data_dir=tmp_path, backend="postgres")

    with pytest.raises(NotRead):
        read_launch_state(settings, None)


def _digest_of(settings: Settings) -> str:
    from hashlib import blake2b

    return blake2b(stored_compact(settings).encode("utf-8"), digest_size=16).hexdigest()
