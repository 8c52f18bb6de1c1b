"""The method table: every memory method bound to the MemoryService call it makes.

What each method takes and returns is the wire's (wire/memory.py); this table is what the
server looks methods up in, and what editor commands run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from lazy_memory.engine.delivery import page
from lazy_memory.engine.doctor import Diagnosis
from lazy_memory.engine.errors import InvalidRecord, NotFound
from lazy_memory.engine.importing import ImportResult
from lazy_memory.engine.index import IndexUnavailable, index_page
from lazy_memory.engine.records import HistoryEntry
from lazy_memory.engine.references import name_in_uri, record_markdown
from lazy_memory.engine.saving import SavedRecord
from lazy_memory.engine.service import MemoryService
from lazy_memory.wire import names
from lazy_memory.wire.index import IndexEntry, encoded_index
from lazy_memory.wire.memory import (
    CONTEXT_NEXT_PAGE,
    CompactParams,
    CompactResult,
    ContextPage,
    ContextParams,
    DocumentParams,
    DocumentResult,
    HistoryResult,
    ImportParams,
    RecallParams,
    RecallResult,
    SaveParams,
    SearchParams,
    SearchResult,
    unavailable_index,
    unreadable_rows,
)
from lazy_memory.wire.params import HistoryParams, NameParams, NoParams, Params

TargetT = TypeVar("TargetT")
ParamsT = TypeVar("ParamsT", bound=Params)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class Method(Generic[TargetT, ParamsT, ResultT]):
    """One JSON-RPC method: its name, params model, result model, and the call it makes.

    The target is what the call runs against: the MemoryService for the memory methods, the
    Storage for the storage methods a remote backend uses.
    """

    name: str
    params: type[ParamsT]
    result: type[ResultT]
    call: Callable[[TargetT, ParamsT], Awaitable[ResultT | dict[str, Any]]]
    """The call; a result too large to build as a model it gives as plain JSON already (in
    the result model's shape), its largest part perhaps Encoded (wire/encoded.py)."""

    async def __call__(self, target: TargetT, raw: Any) -> dict[str, Any]:
        """Validate raw params, make the call, and return the result as plain JSON."""
        result = await self.call(target, self.params.model_validate({} if raw is None else raw))
        return result if isinstance(result, dict) else result.model_dump(mode="json")


async def _recall(service: MemoryService, params: RecallParams) -> RecallResult | dict[str, Any]:
    if params.name is not None:
        return RecallResult(record=await service.recall(params.name))
    if params.page is None:
        # The whole index, written as JSON batch by batch as the store hands it over.
        read = await service.readable_index(encoded_index)
        if isinstance(read, IndexUnavailable):
            return unavailable_index(read)
        encoded, unreadable = read
        return {"records": encoded, **unreadable_rows(unreadable)}
    size = params.page_size
    read_page = await service.readable_index(partial(index_page, page=params.page, size=size))
    if isinstance(read_page, IndexUnavailable):
        return unavailable_index(read_page)
    (shown, count), unreadable = read_page
    page, pages = params.page, max(1, -(-count // size))
    if page > pages:
        raise InvalidRecord(f"there is no page {page}: the index has {pages}")
    return RecallResult(
        records=[IndexEntry.model_validate(entry, from_attributes=True) for entry in shown],
        page=page,
        pages=pages,
        **unreadable_rows(unreadable),
    )


async def _save(service: MemoryService, params: SaveParams) -> SavedRecord:
    return await service.save(
        params.name,
        type=params.type,
        description=params.description,
        body=params.body,
        if_revision=params.if_revision,
    )


async def _document(service: MemoryService, params: DocumentParams) -> DocumentResult:
    name = name_in_uri(params.uri)
    if name is None:
        raise NotFound(f"{params.uri!r} is not a record's URI: use lazy-memory:NAME")
    record = await service.recall(name)
    return DocumentResult(uri=params.uri, name=record.name, text=record_markdown(record))


async def _remove(service: MemoryService, params: NameParams) -> HistoryEntry:
    return await service.remove(params.name)


async def _history(service: MemoryService, params: HistoryParams) -> HistoryResult:
    return HistoryResult(entries=await service.history(params.name))


async def _context(service: MemoryService, params: ContextParams) -> ContextPage:
    context = await service.launch_context(params.role)
    # The wire's fields of the launch context (wire/memory.py), as they always were.
    whole = ContextPage.model_validate(context, from_attributes=True)
    if params.page is None:
        return whole
    text, count = page(context.text, params.page_chars, CONTEXT_NEXT_PAGE, params.page)
    if text is None:
        raise InvalidRecord(f"there is no page {params.page}: the section has {count}")
    return whole.model_copy(update={"text": text, "page": params.page, "pages": count})


async def _compact(service: MemoryService, params: CompactParams) -> CompactResult:
    if params.show:
        return CompactResult(status=await service.compact_status())
    if params.clear:
        return CompactResult(cleared=await service.clear_compact())
    return CompactResult(outcome=await service.compact(params.mode))


async def _import(service: MemoryService, params: ImportParams) -> ImportResult:
    return await service.import_memory(apply=params.apply)


async def _doctor(service: MemoryService, _: NoParams) -> Diagnosis:
    return await service.doctor()


async def _search(service: MemoryService, params: SearchParams) -> SearchResult:
    hits, more = await service.search_page(params.query, params.page, params.limit)
    return SearchResult(hits=hits, more=more)


METHODS: dict[str, Method[MemoryService, Any, Any]] = {
    method.name: method
    for method in (
        Method(names.RECALL, RecallParams, RecallResult, _recall),
        Method(names.SAVE, SaveParams, SavedRecord, _save),
        Method(names.REMOVE, NameParams, HistoryEntry, _remove),
        Method(names.HISTORY, HistoryParams, HistoryResult, _history),
        Method(names.DOCUMENT, DocumentParams, DocumentResult, _document),
        Method(names.CONTEXT, ContextParams, ContextPage, _context),
        Method(names.COMPACT, CompactParams, CompactResult, _compact),
        Method(names.IMPORT, ImportParams, ImportResult, _import),
        Method(names.DOCTOR, NoParams, Diagnosis, _doctor),
        Method(names.SEARCH, SearchParams, SearchResult, _search),
    )
}
"""Every custom method the engine answers, by name."""
