"""The files backend reads what it wrote with the json module: exactly as its models read it.

A history line or a checkpoint in the form the backend writes is read without pydantic
(adapters/files/entries.py, files/checkpoint.py); anything else is the models' to read. The
promise that makes this safe: whatever the json path accepts, the model accepts too, with the
same values. Checked on whatever hypothesis writes through the models, and on every way such a
text can be edited by hand; and the times, written and read back, against the models'.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from lazy_memory.adapters.files.checkpoint import read_checkpoint, write_checkpoint
from lazy_memory.adapters.files.entries import Written, written
from lazy_memory.adapters.files.index import Index
from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.json_time import json_time, parse_json_time
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Provenance,
    RecordType,
)

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
"""What a record may hold: any text but lone surrogates, which no store keeps."""
ZONES = st.one_of(
    st.just(UTC),
    st.integers(-23 * 60 - 59, 23 * 60 + 59).map(
        lambda minutes: timezone(timedelta(minutes=minutes))
    ),
)
TIMES = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=ZONES)


class Stamped(BaseModel):
    """A time as the models write and read it."""

    at: datetime


entries = st.builds(
    HistoryEntry,
    name=TEXT,
    type=st.sampled_from(RecordType),
    description=TEXT,
    body=TEXT,
    provenance=st.none() | st.builds(Provenance, source=TEXT, session_id=st.none() | TEXT),
    # The backend writes revisions from 1: a line of revision 0 is one it cannot read.
    revision=st.integers(1, 2**40),
    operation=st.sampled_from(Operation),
    actor=st.builds(Actor, kind=st.sampled_from(ActorKind), detail=TEXT),
    at=TIMES,
)


def as_the_model_reads(line: bytes) -> Written:
    entry = HistoryEntry.model_validate_json(line)
    return Written(
        entry.name, entry.type, entry.description, entry.revision, entry.operation, entry.at
    )


@given(TIMES)
def test_a_time_is_written_as_the_models_write_it_and_read_back(at: datetime) -> None:
    written_by_the_model = Stamped(at=at).model_dump_json()

    assert json.dumps({"at": json_time(at)}, separators=(",", ":")) == written_by_the_model
    assert parse_json_time(json_time(at)) == at


@given(st.text(max_size=40))
def test_a_time_read_without_the_models_is_one_they_read_the_same(text: str) -> None:
    at = parse_json_time(text)

    if at is not None:
        assert Stamped.model_validate({"at": text}).at == at


@given(entries)
def test_every_line_the_backend_writes_is_read_as_the_model_reads_it(entry: HistoryEntry) -> None:
    line = entry.model_dump_json().encode("utf-8") + b"\n"

    assert written(line) == as_the_model_reads(line)


EDITS = st.sampled_from(
    [
        ("revision", "3"),
        ("revision", 3.0),
        ("revision", True),
        ("type", "USER"),
        ("operation", "delete"),
        ("at", "2026-11-30T12:00:00+00:00"),
        ("at", "2026-11-30T12:00:00.000000Z"),
        ("at", "2026-11-30T12:00:00+05:30:15"),
        ("at", "2026-11-30 12:00:00Z"),
        ("at", 1_790_000_000),
        ("name", None),
        ("body", ["b"]),
        ("actor", {"kind": "human"}),
        ("actor", {"detail": "x", "kind": "human"}),
        ("provenance", {"source": "s"}),
        ("extra", "ignored by the model"),
    ]
)


@given(entries, EDITS, st.booleans())
def test_a_line_edited_by_hand_is_read_as_the_model_reads_it_or_left_to_it(
    entry: HistoryEntry, edit: tuple[str, Any], drop: bool
) -> None:
    fields = json.loads(entry.model_dump_json())
    key, value = edit
    if drop:
        fields.pop(key, None)
    else:
        fields[key] = value
    line = json.dumps(fields, ensure_ascii=False).encode("utf-8") + b"\n"

    read = written(line)

    if read is not None:
        assert read == as_the_model_reads(line)


@given(st.binary(max_size=300))
def test_any_bytes_read_without_the_models_are_bytes_the_model_reads_the_same(line: bytes) -> None:
    read = written(line)

    if read is not None:
        assert read == as_the_model_reads(line)


@given(st.lists(entries, max_size=8))
def test_a_checkpoint_the_backend_writes_is_read_as_its_model_reads_it(
    history: list[HistoryEntry],
) -> None:
    index = Index()
    offset = 0
    for entry in history:
        length = len(entry.model_dump_json()) + 1
        index.apply(entry, offset, length)
        offset += length
    with TemporaryDirectory() as folder:
        path = Path(folder) / "memories.json"
        write_checkpoint(path, index)
        checkpoint, _ = read_checkpoint(path)

    assert checkpoint is not None
    assert (checkpoint.history_entries, checkpoint.history_bytes) == (index.entries, index.offset)
    assert checkpoint.names == index.slots
    assert checkpoint.times == [index.times[name] for name in index.slots]


def test_a_checkpoint_edited_by_hand_is_left_to_its_model(tmp_path: Path) -> None:
    index = Index()
    entry = HistoryEntry(
        name="n",
        type=RecordType.USER,
        description="d",
        body="b",
        revision=1,
        operation=Operation.SAVE,
        actor=Actor(kind=ActorKind.HUMAN, detail="h"),
        at=datetime(2026, 11, 30, tzinfo=UTC),
    )
    index.apply(entry, 0, 100)
    path = tmp_path / "memories.json"
    write_checkpoint(path, index)
    written_checkpoint = json.loads(path.read_bytes())
    for key, value in [("history_bytes", "100"), ("times", ["2026-11-30T00:00:00+00:00"])]:
        edited = {**written_checkpoint, key: value}
        path.write_text(json.dumps(edited), encoding="utf-8")

        checkpoint, _ = read_checkpoint(path)

        # The model reads it (converting the edit), and so it is read as before the edit.
        assert checkpoint is not None
        assert checkpoint.history_bytes == 100
        assert checkpoint.times == [datetime(2026, 11, 30, tzinfo=UTC)]
    path.write_text(json.dumps({**written_checkpoint, "history_bytes": "many"}))
    with pytest.raises(StorageUnavailable, match="is corrupt: history_bytes"):
        read_checkpoint(path)  # the model's refusal, as the store reports it
