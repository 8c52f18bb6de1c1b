"""The wire contract, written once: every JSON-RPC method with its params, result and call.

Every client (the CLI over a daemon, editors, the remote backend) is built against this
table; the server only looks methods up here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictBool,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from lazy_memory.adapters.config import DEFAULT_TOOL_RESULT_LIMIT_CHARS
from lazy_memory.engine.compaction import CompactOutcome, Mode
from lazy_memory.engine.context import LaunchContext, Role
from lazy_memory.engine.delivery import pages
from lazy_memory.engine.doctor import Diagnosis
from lazy_memory.engine.errors import InvalidRecord, NotFound
from lazy_memory.engine.records import HistoryEntry, Record, RecordType, is_unicode
from lazy_memory.engine.references import name_in_uri, record_markdown
from lazy_memory.engine.saving import SavedRecord
from lazy_memory.engine.search import DEFAULT_LIMIT, MAX_LIMIT, SearchHit
from lazy_memory.engine.service import CompactStatus, ImportResult, MemoryService

TargetT = TypeVar("TargetT")
ParamsT = TypeVar("ParamsT", bound="Params")
ResultT = TypeVar("ResultT", bound=BaseModel)
CONTEXT_NEXT_PAGE = 'lazy/memory/context {{"page": {page}}}'
"""How a page of the section names the request for the next one."""


class Params(BaseModel):
    """Base of every method's params: unknown keys are an error, not silently ignored.

    Text must be Unicode: JSON can escape half of a surrogate pair (`"\\ud800"`), and such a
    string can be neither stored, looked up nor logged as UTF-8, so it is refused here, for
    every method, as invalid params.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _unicode_only(cls, data: Any) -> Any:
        where = _lone_surrogate(data, "")
        if where is not None:
            raise PydanticCustomError(
                "lone_surrogate",
                "{field} holds a lone surrogate, which is not Unicode text",
                {"field": where or "the params"},
            )
        return data


def _lone_surrogate(value: Any, path: str) -> str | None:
    """Where in a JSON value a string (or an object's key) holds a lone surrogate, or None."""
    if isinstance(value, str):
        return None if is_unicode(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _lone_surrogate(key, path) is not None:
                return path or "a key"
            found = _lone_surrogate(item, inner)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


class NoParams(Params):
    """A method that takes nothing."""


class RecallParams(Params):
    """`lazy/memory/recall`: without a name, the index (all, or one page); with one, the record."""

    name: str | None = None
    page: int | None = Field(default=None, ge=1)
    page_size: int = Field(default=1000, ge=1, le=100_000)


class SaveParams(Params):
    """`lazy/memory/save`: create, update or revive a record (compare-and-swap if asked)."""

    name: str
    type: str
    description: str
    body: str
    if_revision: int | None = Field(default=None, ge=0)


class NameParams(Params):
    """A method on one record by name (`lazy/memory/rm`)."""

    name: str


class DocumentParams(Params):
    """`lazy/memory/document`: a record's read-only document, by its `lazy-memory:NAME` URI."""

    uri: str


class DocumentResult(BaseModel):
    """A record as the markdown text an editor shows for its `lazy-memory:` URI."""

    uri: str
    name: str
    text: str


class HistoryParams(Params):
    """`lazy/memory/history`: every write, or those of one name."""

    name: str | None = None


class ContextParams(Params):
    """`lazy/memory/context`: the memory section for a launch of this role, or one page of it."""

    role: Role
    page: int | None = Field(default=None, ge=1)
    page_chars: int = Field(default=DEFAULT_TOOL_RESULT_LIMIT_CHARS, ge=1000)


class ContextPage(LaunchContext):
    """The section, or with `page` one page of it (cut at line ends), and how many there are."""

    page: int = 1
    pages: int = 1


class SearchParams(Params):
    """`lazy/search`: a query in the search language, and how many hits to return at most."""

    query: str
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    page: int = Field(default=1, ge=1)
    """With limit as the page size: page 2 is the next limit hits."""


class SearchResult(BaseModel):
    """Search hits, best first, and whether a next page has more."""

    hits: list[SearchHit]
    more: bool = False


class IndexEntry(BaseModel):
    """One live record as the index lists it."""

    name: str
    type: RecordType
    description: str
    revision: int


class OneOf(BaseModel):
    """A result with alternative shapes: only the field that was given goes on the wire."""

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}


class RecallResult(OneOf):
    """The index (`records`, with `page`/`pages` when paged) without a name, else `record`."""

    records: list[IndexEntry] | None = None
    record: Record | None = None
    page: int | None = None
    pages: int | None = None


class HistoryResult(BaseModel):
    """History entries, oldest first."""

    entries: list[HistoryEntry]


class CompactParams(Params):
    """`lazy/memory/compact`: generate a compact (mode), or show or clear the current one."""

    mode: Mode = Mode.AUTO
    show: StrictBool = False
    clear: StrictBool = False

    @model_validator(mode="after")
    def _one_action(self) -> CompactParams:
        if self.show and self.clear:
            raise ValueError("show and clear are two different requests: send one of them")
        return self


class ImportParams(Params):
    """`lazy/memory/import`: preview the harness memory import, or apply it."""

    apply: StrictBool = False


class CompactResult(OneOf):
    """What was generated (`outcome`), what the slot holds (`status`), or `cleared`."""

    outcome: CompactOutcome | None = None
    status: CompactStatus | None = None
    cleared: bool | None = None


@dataclass(frozen=True)
class Method(Generic[TargetT, ParamsT, ResultT]):
    """One JSON-RPC method: its name, params model, result model, and the call it makes.

    The target is what the call runs against: the MemoryService for the memory methods, the
    Storage for the storage methods a remote backend uses.
    """

    name: str
    params: type[ParamsT]
    result: type[ResultT]
    call: Callable[[TargetT, ParamsT], Awaitable[ResultT]]

    async def __call__(self, target: TargetT, raw: Any) -> dict[str, Any]:
        """Validate raw params, make the call, and return the result as plain JSON."""
        result = await self.call(target, self.params.model_validate({} if raw is None else raw))
        return result.model_dump(mode="json")


async def _recall(service: MemoryService, params: RecallParams) -> RecallResult:
    if params.name is not None:
        return RecallResult(record=await service.recall(params.name))
    entries = await service.index()
    if params.page is None:
        shown, page, pages = entries, None, None
    else:
        size = params.page_size
        page, pages = params.page, max(1, -(-len(entries) // size))
        if page > pages:
            raise InvalidRecord(f"there is no page {page}: the index has {pages}")
        shown = entries[(page - 1) * size : page * size]
    return RecallResult(
        records=[IndexEntry.model_validate(entry, from_attributes=True) for entry in shown],
        page=page,
        pages=pages,
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
    context = await service.context(params.role)
    if params.page is None:
        return ContextPage(**dict(context))
    chunks = pages(context.text, params.page_chars, CONTEXT_NEXT_PAGE)
    if params.page > len(chunks):
        raise InvalidRecord(f"there is no page {params.page}: the section has {len(chunks)}")
    update = {"text": chunks[params.page - 1], "page": params.page, "pages": len(chunks)}
    return ContextPage(**{**dict(context), **update})


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
        Method("lazy/memory/recall", RecallParams, RecallResult, _recall),
        Method("lazy/memory/save", SaveParams, SavedRecord, _save),
        Method("lazy/memory/rm", NameParams, HistoryEntry, _remove),
        Method("lazy/memory/history", HistoryParams, HistoryResult, _history),
        Method("lazy/memory/document", DocumentParams, DocumentResult, _document),
        Method("lazy/memory/context", ContextParams, ContextPage, _context),
        Method("lazy/memory/compact", CompactParams, CompactResult, _compact),
        Method("lazy/memory/import", ImportParams, ImportResult, _import),
        Method("lazy/doctor", NoParams, Diagnosis, _doctor),
        Method("lazy/search", SearchParams, SearchResult, _search),
    )
}
"""Every custom method the engine answers, by name."""
