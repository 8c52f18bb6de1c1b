"""The Storage port's contract, written once: each port method's row on the wire.

A row binds one Storage method (engine/ports.py) to its `lazy/storage/*` name, its params
model (whose fields are the method's parameters, by name) and its result model (which holds
what the method returns, in one field or as itself). Three things are made from the rows:

- the daemon's storage methods (rpc/jsonrpc/storage_methods.py): `answer` reads params,
  calls its store's method and builds the result;
- the remote backend (adapters/remote/storage.py) and the reopening store
  (adapters/reopening.py): each is a ForwardingStorage, whose methods are these rows; a call
  on one goes to the class's one `_forward` with the row and the call's arguments.

So a storage method is added in the port, here, and in the three backends that store
(docs/architecture.md, "Where a change goes"). mypy holds a ForwardingStorage to the port
(a row takes its signature from the port's method); tests/unit/test_storage_contract.py
holds the rows to the port and their params to its parameters.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from pydantic import BaseModel

from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.engine.ports import Storage, fold_index, read_partly
from lazy_memory.engine.records import HistoryEntry, Record, UnreadableRow
from lazy_memory.wire import names
from lazy_memory.wire.index import encoded_index, index_entries
from lazy_memory.wire.memory import SearchResult, unreadable_rows
from lazy_memory.wire.params import HistoryParams, NameParams, NoParams, Params
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
    as_unreadable_records,
)

ArgsP = ParamSpec("ArgsP")
ReturnT = TypeVar("ReturnT")
Answer = Callable[[Storage, Any], Awaitable[BaseModel | dict[str, Any]]]
"""A storage method's answer to a peer: from the store and the params, the result."""


class StorageMethod(Generic[ArgsP, ReturnT]):
    """One Storage method on the wire: a row of the contract, and that method of a
    ForwardingStorage (a descriptor whose calls go to the class's `_forward`)."""

    def __init__(
        self,
        port: Callable[Concatenate[Storage, ArgsP], Coroutine[Any, Any, ReturnT]],
        wire_name: str,
        params: type[Params],
        result: type[BaseModel],
        *,
        field: str | None = None,
        many: bool = False,
        to_wire: Callable[[ReturnT], Any] | None = None,
        from_wire: Callable[[Any], ReturnT] | None = None,
        answer: Answer | None = None,
    ) -> None:
        """Bind port's method to wire_name, params and result.

        field is the result's field holding what the method returns; without one, the result
        is the returned model itself, or Done for a method returning None. A read of many
        records (many) answers those the store could not read beside the rest, in the
        result's `unreadable`. to_wire and from_wire convert what the field holds, each way;
        answer replaces the daemon's answer made from the rest.
        """
        self.name = port.__name__
        self.wire_name = wire_name
        self.params = params
        self.result = result
        self.write = wire_name in names.STORAGE_WRITES
        self._field = field
        self._many = many
        self._to_wire = to_wire
        self._from_wire = from_wire
        self.answer: Answer = answer or self._answer
        parameters = list(inspect.signature(port).parameters.values())[1:]  # after self
        self._positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
        self._keyword_only = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]

    def __set_name__(self, owner: type[Any], name: str) -> None:
        if name != self.name:
            raise TypeError(f"the row of Storage.{self.name} is named {name}")

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> StorageMethod[ArgsP, ReturnT]: ...

    @overload
    def __get__(
        self, instance: ForwardingStorage, owner: type[Any]
    ) -> Callable[ArgsP, Coroutine[Any, Any, ReturnT]]: ...

    def __get__(
        self, instance: ForwardingStorage | None, owner: type[Any]
    ) -> StorageMethod[ArgsP, ReturnT] | Callable[ArgsP, Coroutine[Any, Any, ReturnT]]:
        if instance is None:
            return self
        forward = instance._forward

        async def method(*args: ArgsP.args, **kwargs: ArgsP.kwargs) -> ReturnT:
            return await forward(self, *args, **kwargs)

        return method

    async def call(self, storage: Storage, *args: ArgsP.args, **kwargs: ArgsP.kwargs) -> ReturnT:
        """storage's answer to this method with these arguments."""
        return cast(ReturnT, await self._method_of(storage)(*args, **kwargs))

    def params_of(self, *args: ArgsP.args, **kwargs: ArgsP.kwargs) -> Params:
        """A call's arguments as this method's params (pydantic's ValidationError if a value
        does not fit them)."""
        return self.params.model_validate(
            {**dict(zip(self._positional, args, strict=False)), **kwargs}
        )

    def returned(self, result: BaseModel) -> tuple[ReturnT, list[UnreadableRow]]:
        """What the method returns, from its result (ValueError, TypeError or KeyError if that
        does not hold it), and the records the store could not read beside it."""
        if self._field is None:
            return cast(ReturnT, None if isinstance(result, Done) else result), []
        value = getattr(result, self._field)
        unreadable = (getattr(result, "unreadable", None) or []) if self._many else []
        return (value if self._from_wire is None else self._from_wire(value)), unreadable

    def _method_of(self, storage: Storage) -> Callable[..., Awaitable[Any]]:
        # storage's method of the port method's name (__set_name__ holds the row to it), so it
        # takes ArgsP and returns ReturnT.
        return cast(Callable[..., Awaitable[Any]], getattr(storage, self.name))

    async def _answer(self, storage: Storage, params: Params) -> BaseModel | dict[str, Any]:
        positional = [getattr(params, name) for name in self._positional]
        keywords = {name: getattr(params, name) for name in self._keyword_only}
        called = self._method_of(storage)(*positional, **keywords)
        value, unreadable = await read_partly(called) if self._many else (await called, [])
        if self._field is None:
            return self.result() if value is None else cast(BaseModel, value)
        held = value if self._to_wire is None else self._to_wire(value)
        return self.result(**{self._field: held}, **unreadable_rows(unreadable))


async def _streamed_index(storage: Storage, _: NoParams) -> dict[str, Any]:
    # IndexResult's shape, written as JSON batch by batch as the store hands the index over.
    entries, unreadable = await read_partly(fold_index(storage, encoded_index))
    return {"entries": entries, **unreadable_rows(unreadable)}


def _rows(records: list[UnreadableRecord]) -> list[UnreadableRow]:
    return [UnreadableRow.of(record) for record in records]


class ForwardingStorage(ABC):
    """A Storage that stores nothing itself: each method (but aclose) is a row of the
    contract, and a call on one is `_forward(row, *args, **kwargs)`.

    The class body is the contract's table, in the port's order.
    """

    list_records = StorageMethod(
        Storage.list_records,
        names.STORAGE_LIST_RECORDS,
        NoParams,
        RecordsResult,
        field="records",
        many=True,
    )
    list_index = StorageMethod(
        Storage.list_index,
        names.STORAGE_LIST_INDEX,
        NoParams,
        IndexResult,
        field="entries",
        many=True,
        from_wire=index_entries,
        answer=_streamed_index,
    )
    change_marker = StorageMethod(
        Storage.change_marker, names.STORAGE_CHANGE_MARKER, NoParams, MarkerResult, field="marker"
    )
    # Its wire name is the one the method had before the glossary's verb: an older remote
    # backend still calls it by that name.
    recall_record = StorageMethod(
        Storage.recall_record, names.STORAGE_GET_RECORD, NameParams, Record
    )
    save_record = StorageMethod(
        Storage.save_record, names.STORAGE_SAVE_RECORD, SaveRecordParams, Record
    )
    remove_record = StorageMethod(
        Storage.remove_record, names.STORAGE_REMOVE_RECORD, RemoveRecordParams, HistoryEntry
    )
    history = StorageMethod(
        Storage.history,
        names.STORAGE_HISTORY,
        HistoryParams,
        EntriesResult,
        field="entries",
        many=True,
    )
    spellings = StorageMethod(
        Storage.spellings, names.STORAGE_SPELLINGS, NameParams, NamesResult, field="names"
    )
    unreadable_records = StorageMethod(
        Storage.unreadable_records,
        names.STORAGE_UNREADABLE_RECORDS,
        NoParams,
        UnreadableResult,
        field="unreadable",
        to_wire=_rows,
        from_wire=as_unreadable_records,
    )
    live_revisions = StorageMethod(
        Storage.live_revisions,
        names.STORAGE_LIVE_REVISIONS,
        NoParams,
        RevisionsResult,
        field="revisions",
    )
    removed_since = StorageMethod(
        Storage.removed_since,
        names.STORAGE_REMOVED_SINCE,
        WatermarkParams,
        NamesResult,
        field="names",
    )
    search = StorageMethod(
        Storage.search,
        names.STORAGE_SEARCH,
        StorageSearchParams,
        SearchResult,
        field="hits",
        many=True,
    )
    get_compact = StorageMethod(
        Storage.get_compact,
        names.STORAGE_GET_COMPACT,
        NoParams,
        CompactSlotResult,
        field="compact",
    )
    put_compact = StorageMethod(
        Storage.put_compact, names.STORAGE_PUT_COMPACT, PutCompactParams, Done
    )
    clear_compact = StorageMethod(
        Storage.clear_compact, names.STORAGE_CLEAR_COMPACT, NoParams, Done
    )

    @abstractmethod
    async def _forward(
        self, method: StorageMethod[ArgsP, ReturnT], *args: ArgsP.args, **kwargs: ArgsP.kwargs
    ) -> ReturnT:
        """What method answers, called with these arguments."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the store holds."""


STORAGE_CONTRACT: tuple[StorageMethod[Any, Any], ...] = tuple(
    row for row in vars(ForwardingStorage).values() if isinstance(row, StorageMethod)
)
"""Every row of the contract, in the port's order."""
