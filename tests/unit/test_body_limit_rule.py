"""The authoring limit on bodies (#17): refused on saves, configurable, kept on imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazy_memory.adapters import service_factory
from lazy_memory.adapters.config import DEFAULT_MAX_BODY_BYTES, load_settings
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.constants import MAX_BODY_BYTES
from lazy_memory.engine.errors import InvalidConfig, InvalidRecord
from lazy_memory.engine.importing import HarnessMemory, HarnessScan
from lazy_memory.engine.records import authored_content
from lazy_memory.engine.service import MemoryService
from tests.support.actors import BUILDER_SESSION
from tests.support.clocks import NOON, FixedClock

LIMIT = 1_000


def test_the_default_is_64_kib() -> None:
    assert MAX_BODY_BYTES == 64 * 1024


def test_a_body_at_the_limit_is_taken_and_one_byte_over_is_refused_naming_both_sizes() -> None:
    assert authored_content("n", "user", "d", "x" * LIMIT, max_body_bytes=LIMIT).body

    with pytest.raises(InvalidRecord) as refused:
        authored_content("n", "user", "d", "x" * (LIMIT + 1), max_body_bytes=LIMIT)

    message = refused.value.message
    assert "the body is 1,001 bytes; the limit is 1,000 bytes" in message
    assert "[memory] max_body_bytes in lazy.toml" in message


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    body = "é" * (LIMIT // 2)  # 500 characters, 1,000 bytes
    assert authored_content("n", "user", "d", body, max_body_bytes=LIMIT).body == body
    with pytest.raises(InvalidRecord, match="1,002 bytes"):
        authored_content("n", "user", "d", body + "é", max_body_bytes=LIMIT)


def test_the_default_limit_applies_when_none_is_given() -> None:
    authored_content("n", "user", "d", "x" * MAX_BODY_BYTES)
    with pytest.raises(InvalidRecord, match="65,537 bytes; the limit is 65,536"):
        authored_content("n", "user", "d", "x" * (MAX_BODY_BYTES + 1))


async def test_every_save_shape_is_refused_and_nothing_is_written(storage: SqliteStorage) -> None:
    service = MemoryService(storage, BUILDER_SESSION, FixedClock(NOON), max_body_bytes=LIMIT)
    big = "x" * (LIMIT + 1)

    with pytest.raises(InvalidRecord, match="limit is 1,000 bytes"):
        await service.save("whole", type="user", description="d", body=big)
    with pytest.raises(InvalidRecord, match="limit is 1,000 bytes"):
        await service.save("new", type="user", description="d", body=big, if_revision=0)
    await service.save("kept", type="user", description="d", body="small")
    with pytest.raises(InvalidRecord, match="limit is 1,000 bytes"):
        await service.save("kept", body=big)

    assert [entry.name for entry in await service.history()] == ["kept"]
    assert (await service.recall("kept")).body == "small"


async def test_an_imported_body_over_the_limit_is_kept_reported_and_its_record_still_editable(
    storage: SqliteStorage,
) -> None:
    big = "# Imported\n" + "y" * (LIMIT * 3)
    scan = HarnessScan(
        memories=[
            HarnessMemory(path="/m/big.md", mtime=1.0, name="big", description="d", body=big),
            HarnessMemory(path="/m/small.md", mtime=1.0, name="small", description="d", body="s"),
        ],
        directories=["/m"],
    )

    class Harness:
        async def scan(self) -> HarnessScan:
            return scan

    service = MemoryService(
        storage, BUILDER_SESSION, FixedClock(NOON), max_body_bytes=LIMIT, harness=Harness()
    )

    preview = await service.import_memory(apply=False)
    result = await service.import_memory(apply=True)

    assert (preview.large_bodies, preview.max_body_bytes) == (["big"], LIMIT)
    assert (result.large_bodies, result.imported) == (["big"], ["big", "small"])
    assert (await service.recall("big")).body == big
    # An edit that keeps the body is not a body written now: it is not refused.
    edited = await service.save("big", description="shorter summary")
    assert (edited.description, edited.body) == ("shorter summary", big)
    with pytest.raises(InvalidRecord, match="limit is 1,000 bytes"):
        await service.save("big", type="project", description="d", body=big + "!")


def test_lazy_toml_sets_the_limit_and_refuses_a_bad_one(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert load_settings(tmp_path, environ={}).max_body_bytes == DEFAULT_MAX_BODY_BYTES
    (tmp_path / "lazy.toml").write_text("[memory]\nmax_body_bytes = 2048\n")
    settings = load_settings(tmp_path, environ={})
    assert (settings.max_body_bytes, settings.warnings) == (2048, ())

    for bad in ("0", "-1", '"64k"', "1.5", "true"):
        (tmp_path / "lazy.toml").write_text(f"[memory]\nmax_body_bytes = {bad}\n")
        with pytest.raises(InvalidConfig, match=r"memory\.max_body_bytes"):
            load_settings(tmp_path, environ={})


async def test_the_composition_root_gives_the_service_the_configured_limit(
    tmp_path: Path, storage: SqliteStorage
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "lazy.toml").write_text("[memory]\nmax_body_bytes = 10\n")
    service = service_factory(load_settings(tmp_path, environ={}), storage)(BUILDER_SESSION)

    assert service.max_body_bytes == 10
    with pytest.raises(InvalidRecord, match="limit is 10 bytes"):
        await service.save("n", type="user", description="d", body="eleven byte")
