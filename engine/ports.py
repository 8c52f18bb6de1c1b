"""The ports the engine needs from the outside world: storage (and, optionally, its index in
batches), its change feed, a clock and a summarizer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import datetime
from typing import Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import UnreadableRecords
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.records import Actor, HistoryEntry, Operation, Record, RecordContent
from lazy_memory.engine.search_model import SearchHit, SearchQuery


class Storage(Protocol):
    """A durable store of records, their append-only history and the compact slot.

    Every write is atomic and safe across processes sharing the store: it takes the name's
    next revision (revisions only grow, across removal and revival) and appends one history
    entry in the same step. Implementations raise only the engine's typed errors.

    A row the backend cannot read (a type that is not one of the four, a revision or a time
    that does not parse, text that is not valid UTF-8, a files line that is not a record) is
    UnreadableRecords, never an untyped error, and never hides the rest: a read of many
    records reads every other one and raises it with what it read of them as its readable
    (list_records, list_index, fold_index, search, history); a read of that one record
    raises it naming the record and why.
    """

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        ...

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry (no body), ordered by name: what a launch injects."""
        ...

    async def change_marker(self) -> str:
        """A cheap marker of the store's state; no record is read.

        Every committed write, whichever process made it (a save, removal or import, a change
        of the compact slot), moves it to a value it never had before, reopened handles
        included. So a reader that gets a marker, reads, and later gets the same marker again
        knows nothing was written in between: what it read is still what the store holds.
        """
        ...

    async def get_record(self, name: str) -> Record:
        """The live record called name; NotFound if it never existed or was removed."""
        ...

    async def save_record(
        self,
        content: RecordContent,
        *,
        actor: Actor,
        at: datetime,
        operation: Operation = Operation.SAVE,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record as its next revision.

        With if_revision, the save happens only if the name's latest revision (a tombstone
        included; 0 when the name was never written) equals it, else Conflict.
        """
        ...

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision; NotFound if it is not live."""
        ...

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in the order written, or those of one name (maybe none)."""
        ...

    async def spellings(self, name: str) -> list[str]:
        """The spellings by which the store holds the name name (live or removed records).

        [name] when it holds that exact name; else every name it holds that is the same name,
        equal after Unicode normalisation (engine/names.py, spellings_among), in name order;
        empty when none. The engine finds a record by any spelling through it.
        """
        ...

    async def unreadable_records(self) -> list[UnreadableRecord]:
        """Every live record the store holds but cannot read in full, and why, in name order.

        A whole check of every live record (doctor's), its body included: a record whose
        index line reads but whose full row does not (a provenance or an author that does
        not parse) is named here, and only by a read of the record itself elsewhere.
        """
        ...

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record: what a new compact's watermark covers."""
        ...

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now, in name order."""
        ...

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, best first (ties by name).

        Every backend finds the same records for a query: it tokenizes as engine/search_model.py
        does (tokenize), matches() is the meaning of a match, and a match in the name ranks
        above one in the description, which ranks above one in the body.
        """
        ...

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, or None when it is empty."""
        ...

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot (no history is kept)."""
        ...

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        ...

    async def aclose(self) -> None:
        """Release connections, locks and file handles."""
        ...


IndexBatches = Iterator[list[IndexEntry]]
"""The live index in batches, ordered by name."""
FoldT = TypeVar("FoldT")


@runtime_checkable
class IndexFolding(Protocol):
    """An optional capability of a Storage: handing its index over in batches.

    A reader that needs only a page, or turns each entry into a line or into JSON, then never
    holds the whole index: at 100,000 records it is tens of megabytes as entries.
    """

    async def fold_index(self, fold: Callable[[IndexBatches], FoldT]) -> FoldT:
        """fold's answer on every live record's index entry, ordered by name, in batches.

        The batches come from one read of the store, as list_index's entries do. fold may run
        on another thread, and more than once (a read the store must make again starts a
        fresh fold on fresh batches): it only computes, from nothing but its batches. Records
        the store cannot read are left out of the batches and raised after the fold as
        UnreadableRecords, whose readable is the fold's answer.
        """
        ...


async def fold_index(storage: Storage, fold: Callable[[IndexBatches], FoldT]) -> FoldT:
    """fold's answer on storage's index: streamed where the storage can, else one batch.

    Where its class can: a proxy that forwards whatever it is asked for (a test's counting
    storage, say) is read through list_index, the method it stands in for.
    """
    if issubclass(type(storage), IndexFolding):
        return await cast(IndexFolding, storage).fold_index(fold)
    try:
        entries = await storage.list_index()
    except UnreadableRecords as error:
        error.readable = fold(iter([cast(list[IndexEntry], error.readable)]))
        raise
    return fold(iter([entries]))


async def read_partly(read: Awaitable[FoldT]) -> tuple[FoldT, list[UnreadableRecord]]:
    """read's answer, and no record; or, when the store holds records it could not read, what
    the read gave of the rest and those records (UnreadableRecords): for a read that shows
    what it can and names the rest (a read of many records: see Storage)."""
    try:
        return await read, []
    except UnreadableRecords as error:
        return cast(FoldT, error.readable), error.records


class Clock(Protocol):
    """Where the engine gets the time from, so tests can fix it."""

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class Summarizer(Protocol):
    """A language model that writes a compact's summary from a prompt.

    Any failure (no credential, offline, an API error or timeout, a command's non-zero
    exit, an empty answer) raises LLMUnavailable with a one-line reason.
    """

    @property
    def name(self) -> str:
        """The generator's name as a compact records it: `anthropic` or `command`."""
        ...

    @property
    def model(self) -> str:
        """The model (or command) it will use, for the user to see before any call."""
        ...

    async def summarize(self, prompt: str) -> str:
        """The model's answer to prompt, as text."""
        ...

    def known_failure(self) -> str | None:
        """The failure summarize would meet before reaching any model (LAZY_OFFLINE=1, no
        credential, no such command), known without a call and at no cost; None when a call
        would reach the model, whose answer only the call can tell."""
        ...


class Change(BaseModel):
    """A write committed to the store: the name, its new revision, and what the write was."""

    model_config = ConfigDict(frozen=True)

    name: str
    revision: int
    operation: Operation


ChangeListener = Callable[[Change], None]
"""Told of each change as it is committed."""


@runtime_checkable
class ChangeFeed(Protocol):
    """An optional capability of a Storage: hearing of writes as other processes commit them.

    A backend shared by many processes (PostgreSQL) offers it so a running engine can tell
    its clients, and drop what it cached, when a record changes elsewhere. Every committed
    write is announced, this process's own included; writes committed while the feed is
    disconnected are not, and it reconnects by itself.
    """

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every change committed from now on, until unsubscribed."""
        ...

    async def unsubscribe(self, listener: ChangeListener) -> None:
        """Stop calling listener."""
        ...
