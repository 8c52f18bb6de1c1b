"""The storage table: every `lazy/storage/*` method bound to the Storage call it makes.

What each takes and returns is the wire's (wire/storage.py). Only a trusted peer (a
connection whose grant has storage access) may use these: they write as whatever actor the
peer names, like a holder of the database file would. A read of many records that meets
records the store cannot read answers what it read of the rest with them in `unreadable`,
for the peer to raise UnreadableRecords as its own store would (adapters/remote/storage.py).
"""

from __future__ import annotations

from typing import Any

from lazy_memory.engine.names import check_spelling, check_writable_name
from lazy_memory.engine.ports import Storage, fold_index, read_partly
from lazy_memory.engine.records import HistoryEntry, Record, UnreadableRow
from lazy_memory.rpc.jsonrpc.methods import Method
from lazy_memory.wire import names
from lazy_memory.wire.index import encoded_index
from lazy_memory.wire.memory import SearchResult, unreadable_rows
from lazy_memory.wire.params import HistoryParams, NameParams, NoParams
from lazy_memory.wire.storage import (
    CompactSlotResult,
    Done,
    EntriesResult,
    IndexResult,
    MarkerResult,
    NamesResult,
    PutCompactParams,
    RecordsResult,
    RemoveRecordParams,
    RevisionsResult,
    SaveRecordParams,
    StorageSearchParams,
    UnreadableResult,
    WatermarkParams,
)


async def _list_records(storage: Storage, _: NoParams) -> RecordsResult:
    records, unreadable = await read_partly(storage.list_records())
    return RecordsResult(records=records, **unreadable_rows(unreadable))


async def _list_index(storage: Storage, _: NoParams) -> dict[str, Any]:
    # IndexResult's shape, written as JSON batch by batch as the store hands the index over.
    entries, unreadable = await read_partly(fold_index(storage, encoded_index))
    return {"entries": entries, **unreadable_rows(unreadable)}


async def _change_marker(storage: Storage, _: NoParams) -> MarkerResult:
    return MarkerResult(marker=await storage.change_marker())


async def _recall_record(storage: Storage, params: NameParams) -> Record:
    return await storage.recall_record(params.name)


async def _save_record(storage: Storage, params: SaveRecordParams) -> Record:
    # A peer writes past the service, so the name rule is applied here too: a name the
    # store does not hold yet must obey it, and must not be another spelling of a held one
    # (engine/names.py).
    await check_writable_name(params.content.name, storage)
    await check_spelling(params.content.name, storage)
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
    entries, unreadable = await read_partly(storage.history(params.name))
    return EntriesResult(entries=entries, **unreadable_rows(unreadable))


async def _spellings(storage: Storage, params: NameParams) -> NamesResult:
    return NamesResult(names=await storage.spellings(params.name))


async def _live_revisions(storage: Storage, _: NoParams) -> RevisionsResult:
    return RevisionsResult(revisions=await storage.live_revisions())


async def _removed_since(storage: Storage, params: WatermarkParams) -> NamesResult:
    return NamesResult(names=await storage.removed_since(params.watermark))


async def _search(storage: Storage, params: StorageSearchParams) -> SearchResult:
    hits, unreadable = await read_partly(storage.search(params.query, params.limit))
    return SearchResult(hits=hits, **unreadable_rows(unreadable))


async def _unreadable_records(storage: Storage, _: NoParams) -> UnreadableResult:
    rows = [UnreadableRow.of(record) for record in await storage.unreadable_records()]
    return UnreadableResult(unreadable=rows)


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
        Method(names.STORAGE_LIST_RECORDS, NoParams, RecordsResult, _list_records),
        Method(names.STORAGE_LIST_INDEX, NoParams, IndexResult, _list_index),
        Method(names.STORAGE_CHANGE_MARKER, NoParams, MarkerResult, _change_marker),
        Method(names.STORAGE_GET_RECORD, NameParams, Record, _recall_record),
        Method(names.STORAGE_SAVE_RECORD, SaveRecordParams, Record, _save_record),
        Method(names.STORAGE_REMOVE_RECORD, RemoveRecordParams, HistoryEntry, _remove_record),
        Method(names.STORAGE_HISTORY, HistoryParams, EntriesResult, _history),
        Method(names.STORAGE_SPELLINGS, NameParams, NamesResult, _spellings),
        Method(names.STORAGE_LIVE_REVISIONS, NoParams, RevisionsResult, _live_revisions),
        Method(names.STORAGE_REMOVED_SINCE, WatermarkParams, NamesResult, _removed_since),
        Method(names.STORAGE_SEARCH, StorageSearchParams, SearchResult, _search),
        Method(names.STORAGE_UNREADABLE_RECORDS, NoParams, UnreadableResult, _unreadable_records),
        Method(names.STORAGE_GET_COMPACT, NoParams, CompactSlotResult, _get_compact),
        Method(names.STORAGE_PUT_COMPACT, PutCompactParams, Done, _put_compact),
        Method(names.STORAGE_CLEAR_COMPACT, NoParams, Done, _clear_compact),
    )
}
"""Every storage method a trusted peer may call, by name."""
