"""The files backend on disk: JSON lines, the checkpoint, torn lines, the first format."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from lazy_memory.adapters.files.index import CHECKPOINT_MIN_ENTRIES
from lazy_memory.adapters.files.storage import FileStorage
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import (
    HistoryEntry,
    Operation,
    RecordContent,
    RecordType,
    history_entry,
    record_after,
)
from tests.support.actors import ALICE
from tests.support.clocks import T0


def content(name: str, description: str = "About it", body: str = "The body.") -> RecordContent:
    return RecordContent(name=name, type=RecordType.PROJECT, description=description, body=body)


def history_lines(root: Path) -> list[str]:
    return (root / "memory-history.json").read_text(encoding="utf-8").splitlines(keepends=True)


def files_in(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in root.iterdir()}


def checkpoint(root: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads((root / "memories.json").read_bytes())
    return value


async def test_each_save_appends_one_line_holding_its_history_entry(tmp_path: Path) -> None:
    storage = await FileStorage.open(tmp_path)
    await storage.save_record(content("alpha"), actor=ALICE, at=T0)
    await storage.save_record(content("alpha", body="Line one.\nLine two."), actor=ALICE, at=T0)
    await storage.remove_record("alpha", actor=ALICE, at=T0)

    lines = history_lines(tmp_path)
    history = await storage.history()
    assert [json.loads(line) for line in lines] == [e.model_dump(mode="json") for e in history]
    assert all(line.endswith("}\n") for line in lines)
    assert [(e.revision, e.operation) for e in history] == [
        (1, Operation.SAVE),
        (2, Operation.SAVE),
        (3, Operation.REMOVE),
    ]
    await storage.aclose()


async def test_a_torn_last_line_is_ignored_then_cut_off_by_the_next_write(tmp_path: Path) -> None:
    storage = await FileStorage.open(tmp_path)
    await storage.save_record(content("alpha"), actor=ALICE, at=T0)
    await storage.aclose()
    # What a writer killed in the middle of its append leaves: a line without its newline.
    with (tmp_path / "memory-history.json").open("ab") as history:
        history.write(b'{"name":"beta","type":"proj')

    reopened = await FileStorage.open(tmp_path)
    assert [entry.name for entry in await reopened.history()] == ["alpha"]
    assert [entry.name for entry in await reopened.list_index()] == ["alpha"]
    await reopened.save_record(content("gamma"), actor=ALICE, at=T0)

    lines = history_lines(tmp_path)
    assert [json.loads(line)["name"] for line in lines] == ["alpha", "gamma"]
    assert [entry.name for entry in await reopened.history()] == ["alpha", "gamma"]
    await reopened.aclose()


async def test_a_long_tail_gets_a_checkpoint_and_a_missing_one_is_rebuilt(tmp_path: Path) -> None:
    storage = await FileStorage.open(tmp_path)
    count = CHECKPOINT_MIN_ENTRIES + 5
    for number in range(count):
        await storage.save_record(content(f"record-{number:03}"), actor=ALICE, at=T0)
    written = checkpoint(tmp_path)
    assert written["format"] == 2
    assert 0 < int(str(written["history_entries"])) <= count
    index = await storage.list_index()
    await storage.aclose()

    (tmp_path / "memories.json").unlink()
    reopened = await FileStorage.open(tmp_path)
    assert await reopened.list_index() == index
    assert (await reopened.recall_record("record-042")).name == "record-042"
    assert not (tmp_path / "memories.json").exists(), "a read wrote a checkpoint"
    await reopened.save_record(content("one-more"), actor=ALICE, at=T0)
    assert checkpoint(tmp_path)["history_entries"] == count + 1
    await reopened.aclose()


async def test_a_checkpoint_the_history_does_not_reach_is_an_error(tmp_path: Path) -> None:
    storage = await FileStorage.open(tmp_path)
    for number in range(CHECKPOINT_MIN_ENTRIES + 5):
        await storage.save_record(content(f"record-{number:03}"), actor=ALICE, at=T0)
    await storage.aclose()
    history = tmp_path / "memory-history.json"
    history.write_bytes(history.read_bytes()[:100])

    with pytest.raises(StorageUnavailable, match=r"memories\.json is corrupt"):
        await FileStorage.open(tmp_path)


async def test_a_store_of_the_first_format_is_read_as_it_is_and_converted_by_a_write(
    tmp_path: Path,
) -> None:
    entries = [
        history_entry(content("alpha"), revision=1, operation=Operation.SAVE, actor=ALICE, at=T0),
        history_entry(
            content("beta", "Imported", "ünïcode body"),
            revision=1,
            operation=Operation.IMPORT,
            actor=ALICE,
            at=T0 + timedelta(minutes=1),
        ),
        history_entry(
            content("alpha", "Updated"),
            revision=2,
            operation=Operation.SAVE,
            actor=ALICE,
            at=T0 + timedelta(minutes=2),
        ),
        history_entry(
            content("beta", "Imported", "ünïcode body"),
            revision=2,
            operation=Operation.REMOVE,
            actor=ALICE,
            at=T0 + timedelta(minutes=3),
        ),
    ]
    write_first_format(tmp_path, entries)
    as_written = files_in(tmp_path)

    storage = await FileStorage.open(tmp_path)

    assert await storage.history() == entries
    assert await storage.list_index() == [
        IndexEntry("alpha", RecordType.PROJECT, "Updated", 2, entries[2].at)
    ]
    assert await storage.recall_record("alpha") == record_after(entries[2])
    assert await storage.removed_since({"alpha": 1, "beta": 1}) == ["beta"]
    assert files_in(tmp_path) == as_written, "a read changed the store's files"
    revived = await storage.save_record(content("beta", "Back"), actor=ALICE, at=T0)
    assert revived.revision == 3
    assert [json.loads(line)["name"] for line in history_lines(tmp_path)] == [
        "alpha",
        "beta",
        "alpha",
        "beta",
        "beta",
    ]
    assert checkpoint(tmp_path)["history_entries"] == 4
    await storage.aclose()

    reopened = await FileStorage.open(tmp_path)
    assert [entry.revision for entry in await reopened.history("beta")] == [1, 2, 3]
    await reopened.aclose()


def write_first_format(root: Path, entries: list[HistoryEntry]) -> None:
    """A store as the first format wrote it: the history as one JSON array, and every
    name's latest state in full in memories.json."""
    root.mkdir(parents=True, exist_ok=True)
    history = [entry.model_dump(mode="json") for entry in entries]
    records = {
        entry.name: {
            **record_after(entry).model_dump(mode="json"),
            "deleted": entry.operation is Operation.REMOVE,
        }
        for entry in entries
    }
    for name, value in (
        ("memory-history.json", history),
        ("memories.json", {"history_length": len(entries), "records": records}),
    ):
        text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        (root / name).write_text(text, encoding="utf-8")
