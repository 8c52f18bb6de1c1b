"""The storage port on the wire (`lazy/storage/*`): what the remote backend calls.

Only a trusted peer (a connection whose grant has storage access) may use these: they
write as whatever actor the peer names, like a holder of the database file would.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from lazy_memory.engine.compact import Compact, Watermark
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.names import check_writable_name
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    RecordType,
)
from lazy_memory.engine.search import SearchQuery
from lazy_memory.rpc.methods import (
    HistoryParams,
    Method,
    NameParams,
    NoParams,
    Params,
    SearchResult,
)

_TYPES = {member.value: member for member in RecordType}


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
    """Live records, ordered by name."""

    records: list[Record]


class IndexResult(BaseModel):
    """Live records' index entries, ordered by name, each
    `[name, type, description, revision, updated_at]` with updated_at in ISO 8601.

    The rows are plain arrays, made by index_rows and read by index_entries rather than a
    model per row: at 100,000 records, per-row validation costs more than the rest.
    """

    entries: list[Any]


def index_rows(entries: list[IndexEntry]) -> list[list[Any]]:
    """Index entries as IndexResult carries them."""
    return [
        [
            entry.name,
            entry.type.value,
            entry.description,
            entry.revision,
            entry.updated_at.isoformat(),
        ]
        for entry in entries
    ]


def index_entries(rows: list[Any]) -> list[IndexEntry]:
    """IndexResult's rows as index entries; ValueError, TypeError or KeyError if one is bad."""
    parse = datetime.fromisoformat
    types = _TYPES
    entries = []
    for name, type_, description, revision, updated_at in rows:
        if type(name) is not str or type(description) is not str or type(revision) is not int:
            raise ValueError("an index row is not [name, type, description, revision, time]")
        at = parse(updated_at)
        if at.tzinfo is None:
            raise ValueError(f"the time of {name!r} has no time zone")
        entries.append(IndexEntry(name, types[type_], description, revision, at))
    return entries


class MarkerResult(BaseModel):
    """The store's change marker: it moves with every committed write."""

    marker: str


class EntriesResult(BaseModel):
    """History entries in write order."""

    entries: list[HistoryEntry]


class RevisionsResult(BaseModel):
    """The current revision of every live record."""

    revisions: dict[str, int]


class NamesResult(BaseModel):
    """Record names."""

    names: list[str]


class CompactSlotResult(BaseModel):
    """The compact slot's content, absent when the slot is empty."""

    compact: Compact | None = None


async def _list_records(storage: Storage, _: NoParams) -> RecordsResult:
    return RecordsResult(records=await storage.list_records())


async def _list_index(storage: Storage, _: NoParams) -> IndexResult:
    return IndexResult(entries=index_rows(await storage.list_index()))


async def _change_marker(storage: Storage, _: NoParams) -> MarkerResult:
    return MarkerResult(marker=await storage.change_marker())


async def _get_record(storage: Storage, params: NameParams) -> Record:
    return await storage.get_record(params.name)


async def _save_record(storage: Storage, params: SaveRecordParams) -> Record:
    # A peer writes past the service, so the name rule is applied here too: a name the
    # store does not hold yet must obey it (engine/names.py).
    await check_writable_name(params.content.name, storage)
    return await storage.save_record(
        params.content,
        actor=params.actor,
        at=params.at,
        operation=params.operation,
        if_revision=params.if_revision,
    )


async def _remove_record(storage: Storage, params: RemoveRecordParams) -> HistoryEntry:
    return await storage.remove_record(params.name, actor=params.actor, at=params.at)


async def _history(storage: Storage, params: HistoryParams) -> EntriesResult:
    return EntriesResult(entries=await storage.history(params.name))


async def _live_revisions(storage: Storage, _: NoParams) -> RevisionsResult:
    return RevisionsResult(revisions=await storage.live_revisions())


async def _removed_since(storage: Storage, params: WatermarkParams) -> NamesResult:
    return NamesResult(names=await storage.removed_since(params.watermark))


async def _search(storage: Storage, params: StorageSearchParams) -> SearchResult:
    return SearchResult(hits=await storage.search(params.query, params.limit))


async def _get_compact(storage: Storage, _: NoParams) -> CompactSlotResult:
    return CompactSlotResult(compact=await storage.get_compact())


async def _put_compact(storage: Storage, params: PutCompactParams) -> Done:
    await storage.put_compact(params.compact)
    return Done()


async def _clear_compact(storage: Storage, _: NoParams) -> Done:
    await storage.clear_compact()
    return Done()


STORAGE_METHODS: dict[str, Method[Storage, Any, Any]] = {
    method.name: method
    for method in (
        Method("lazy/storage/list_records", NoParams, RecordsResult, _list_records),
        Method("lazy/storage/list_index", NoParams, IndexResult, _list_index),
        Method("lazy/storage/change_marker", NoParams, MarkerResult, _change_marker),
        Method("lazy/storage/get_record", NameParams, Record, _get_record),
        Method("lazy/storage/save_record", SaveRecordParams, Record, _save_record),
        Method("lazy/storage/remove_record", RemoveRecordParams, HistoryEntry, _remove_record),
        Method("lazy/storage/history", HistoryParams, EntriesResult, _history),
        Method("lazy/storage/live_revisions", NoParams, RevisionsResult, _live_revisions),
        Method("lazy/storage/removed_since", WatermarkParams, NamesResult, _removed_since),
        Method("lazy/storage/search", StorageSearchParams, SearchResult, _search),
        Method("lazy/storage/get_compact", NoParams, CompactSlotResult, _get_compact),
        Method("lazy/storage/put_compact", PutCompactParams, Done, _put_compact),
        Method("lazy/storage/clear_compact", NoParams, Done, _clear_compact),
    )
}
"""Every storage method a trusted peer may call, by name."""

STORAGE_WRITES = frozenset(
    {
        "lazy/storage/save_record",
        "lazy/storage/remove_record",
        "lazy/storage/put_compact",
        "lazy/storage/clear_compact",
    }
)
"""The storage methods that write: only a trusted peer may call them, never an agent."""
