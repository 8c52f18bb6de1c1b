"""The params and results of the storage methods (`lazy/storage/*`): the Storage port on the
wire, which a remote backend calls and only a trusted peer may use."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from lazy_memory.engine.compact import Compact, Watermark
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    UnreadableRow,
)
from lazy_memory.engine.search_model import SearchQuery
from lazy_memory.wire.params import Params


class SaveRecordParams(Params):
    """`lazy/storage/save_record`: the Storage.save_record arguments."""

    content: RecordContent
    actor: Actor
    at: datetime
    operation: Operation = Operation.SAVE
    if_revision: int | None = None


class RemoveRecordParams(Params):
    """`lazy/storage/remove_record`: the Storage.remove_record arguments."""

    name: str
    actor: Actor
    at: datetime


class WatermarkParams(Params):
    """`lazy/storage/removed_since`: a compact's watermark."""

    watermark: Watermark


class PutCompactParams(Params):
    """`lazy/storage/put_compact`: the compact to store."""

    compact: Compact


class StorageSearchParams(Params):
    """`lazy/storage/search`: a query the engine has parsed, and how many hits to return."""

    query: SearchQuery
    limit: int = Field(ge=1)


class Done(BaseModel):
    """The empty result of a call that returns nothing."""


class RecordsResult(BaseModel):
    """Live records, ordered by name, and those the store could not read."""

    records: list[Record]
    unreadable: list[UnreadableRow] = []


class IndexResult(BaseModel):
    """Live records' index entries, ordered by name, each in wire.index.IndexEntry's shape.

    Left as plain JSON here: index_json writes them and index_entries reads them (see
    wire/index.py for why).
    """

    entries: list[Any]
    unreadable: list[UnreadableRow] = []
    """The live records the store could not read, left out of entries."""


class MarkerResult(BaseModel):
    """The store's change marker: it moves with every committed write."""

    marker: str


class EntriesResult(BaseModel):
    """History entries in write order, and the records whose entries could not be read."""

    entries: list[HistoryEntry]
    unreadable: list[UnreadableRow] = []


class UnreadableResult(BaseModel):
    """`lazy/storage/unreadable_records`: every live record the store cannot read, and why."""

    unreadable: list[UnreadableRow]


class RevisionsResult(BaseModel):
    """The current revision of every live record."""

    revisions: dict[str, int]


class NamesResult(BaseModel):
    """Record names."""

    names: list[str]


class CompactSlotResult(BaseModel):
    """The compact slot's content, absent when the slot is empty."""

    compact: Compact | None = None


def as_unreadable_records(rows: list[UnreadableRow]) -> list[UnreadableRecord]:
    """The records a daemon named as unreadable (`unreadable: [{name, reason}]`), as the engine
    names them."""
    return [UnreadableRecord(row.name, row.reason) for row in rows]
