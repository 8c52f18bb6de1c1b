"""The files backend: the store as plain files in one directory, shared by many processes.

`memory-history.json` is the history, one JSON object per line, append-only and the source
of truth; `memories.json` is a checkpoint of the index over it; `memory-compact.json` is the
compact slot. files/journal.py says how they are written and read; this module is the
Storage port over them, and the one place their failures become the engine's errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import ParamSpec, TypeVar

from pydantic import ValidationError

from lazy_memory.adapters.config import DEFAULT_POLL_SECONDS
from lazy_memory.adapters.data_dir import create_data_dir
from lazy_memory.adapters.durable import replace_file
from lazy_memory.adapters.files.index import Index, index_batches, unreadable_records
from lazy_memory.adapters.files.journal import Journal
from lazy_memory.adapters.files.layout import (
    FileKey,
    corrupt,
    file_key,
    key_of,
    validation_reason,
)
from lazy_memory.adapters.files.lines import BadLine
from lazy_memory.adapters.row_checks import as_text, unreadable
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.constants import COMPACT_FILE
from lazy_memory.engine.errors import (
    Conflict,
    InvalidRecord,
    LazyMemoryError,
    NotFound,
    StorageUnavailable,
    UnreadableRecords,
)
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.names import spellings_among
from lazy_memory.engine.ports import ChangeListener, IndexBatches
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    history_entry,
    record_after,
)
from lazy_memory.engine.search_model import SearchHit, SearchQuery
from lazy_memory.engine.search_ranking import SearchIndex

# put_compact takes no lock, so only a compact temp file this old is surely abandoned.
_STALE_COMPACT_SECONDS = 3600.0

_P = ParamSpec("_P")
_T = TypeVar("_T")
logger = logging.getLogger(__name__)


class FileStorage:
    """The Storage port over JSON files under one directory, safe across processes.

    It is also a ChangeFeed: while anyone listens, every write it sees is announced, its own
    as soon as they are committed, other processes' within poll_seconds. Reading only the
    lines appended since it last looked, that costs nothing per record in the store.
    """

    def __init__(self, root: Path, poll_seconds: float = DEFAULT_POLL_SECONDS) -> None:
        self.root = root
        self._where = f"the store at {root}"
        self._poll_seconds = poll_seconds
        self._listeners: list[ChangeListener] = []
        self._watcher: asyncio.Task[None] | None = None
        self._journal = Journal(root)
        self._compact = root / COMPACT_FILE
        self._compact_cache: tuple[FileKey, Compact] | None = None
        # The search index and the generation of the journal's index it was built at.
        self._search_index: tuple[int, SearchIndex, list[UnreadableRecord]] | None = None
        # change_marker: this handle, and how often it has seen the files change.
        self._handle = os.urandom(8).hex()
        self._seen: tuple[object, ...] | None = None
        self._changes = 0

    @classmethod
    async def open(cls, root: Path, poll_seconds: float = DEFAULT_POLL_SECONDS) -> FileStorage:
        """Open the store under root, reading it only: the first write creates what it needs."""
        storage = cls(root, poll_seconds)
        await storage._run(storage._journal.open)
        return storage

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""

        def records(index: Index) -> list[Record]:
            entries, failed = self._live_entries(index)
            return self._read_all(index, [record_after(entry) for entry in entries], failed)

        return await self._read(records)

    async def list_index(self) -> list[IndexEntry]:
        """Every live record's index entry (no body), ordered by name."""
        return await self.fold_index(
            lambda batches: [entry for batch in batches for entry in batch]
        )

    async def fold_index(self, fold: Callable[[IndexBatches], _T]) -> _T:
        """fold's answer on the index, each batch of entries made as fold comes to it."""
        return await self._read(lambda index: self._read_all(index, fold(index_batches(index))))

    async def unreadable_records(self) -> list[UnreadableRecord]:
        """Every live record whose latest line does not read, and why, in name order: the
        ones the index found, and those whose whole entry its model refuses."""

        def check(index: Index) -> list[UnreadableRecord]:
            failed = self._live_entries(index)[1] + unreadable_records(index)
            return sorted(failed)

        return await self._read(check)

    async def change_marker(self) -> str:
        """This handle, and how many changes of the files it has seen.

        A change is a new end of the history (which only grows) or another compact file in
        place, or none: the count moves with each, so clearing the compact never brings an
        earlier marker back, and no other handle has this one's id.
        """

        def marker(index: Index) -> str:
            seen = (index.history_file, index.offset, key_of(self._compact))
            if seen != self._seen:
                self._seen = seen
                self._changes += 1
            return f"{self._handle}:{self._changes}"

        return await self._read(marker)

    async def recall_record(self, name: str) -> Record:
        """The live record called name; NotFound if it never existed or was removed."""

        def record(index: Index) -> Record:
            return record_after(self._live_entry(index, name))

        return await self._read(record)

    async def save_record(
        self,
        content: RecordContent,
        *,
        actor: Actor,
        at: datetime,
        operation: Operation = Operation.SAVE,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record as its next revision (Conflict on a CAS miss)."""

        def change(index: Index) -> HistoryEntry:
            current = index.slots.get(content.name)
            latest = current.revision if current is not None else 0
            if if_revision is not None and if_revision != latest:
                raise Conflict(
                    f"{content.name!r} is at revision {latest}, "
                    f"not the expected revision {if_revision}"
                )
            return history_entry(
                content, revision=latest + 1, operation=operation, actor=actor, at=at
            )

        return record_after(await self._run(self._journal.commit, change))

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision; NotFound if it is not live."""

        def change(index: Index) -> HistoryEntry:
            live = self._live_entry(index, name)
            return history_entry(
                live,
                revision=live.revision + 1,
                operation=Operation.REMOVE,
                actor=actor,
                at=at,
            )

        return await self._run(self._journal.commit, change)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in the order written, or those of one name (maybe none).

        A name the index has never seen has none, and the history is not read for it: every
        save of a new name asks (is it a revival?), and the whole history is O(store).
        """

        def read(index: Index) -> list[HistoryEntry]:
            if name is not None and name not in index.slots:
                return []
            entries, failed = [], {}
            for entry in self._journal.history(name):
                if not isinstance(entry, BadLine):
                    entries.append(entry)
                elif as_text(entry.name) not in failed:  # the first of a record's, as SQL's
                    at = "a line" if entry.revision is None else f"revision {entry.revision}"
                    bad = unreadable(entry.name, f"{at} in its history: {entry.reason}")
                    failed[bad.name] = bad
            if failed:
                raise UnreadableRecords.found(self._where, list(failed.values()), entries)
            return entries

        return await self._read(read)

    async def spellings(self, name: str) -> list[str]:
        """The names held, live or removed, that are the same name as name."""
        return await self._read(lambda index: spellings_among(name, index.slots))

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        return await self._read(
            lambda index: {name: index.slots[name].revision for name in index.live}
        )

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now, in name order."""

        return await self._read(lambda index: index.removed_since(watermark))

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, from an index rebuilt after any write."""

        def search(index: Index) -> list[SearchHit]:
            if self._search_index is None or self._search_index[0] != index.generation:
                entries, failed = self._live_entries(index)
                self._search_index = (index.generation, SearchIndex(entries), failed)
            _, searched, failed = self._search_index
            # The index cannot tell whether a record it cannot read would match: all are named.
            return self._read_all(index, searched.search(query, limit), failed)

        return await self._read(search)

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, or None when it is empty."""
        return await self._run(self._read_compact)

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot atomically."""
        data = json.dumps(compact.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
        await self._run(self._replace_compact, data.encode("utf-8"))

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        await self._run(self._clear_compact)

    async def subscribe(self, listener: ChangeListener) -> None:
        """Call listener with every write committed from now on, this process's included."""
        self._listeners.append(listener)
        if self._watcher is None:
            try:
                await self._run(self._journal.record_changes, True)
            except LazyMemoryError as error:
                logger.warning("cannot look for changes in the store: %s", error.message)
            self._watcher = asyncio.create_task(self._watch())

    async def unsubscribe(self, listener: ChangeListener) -> None:
        """Stop calling listener; looking for other processes' writes stops with the last."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)
        if not self._listeners:
            await self._stop_watching()

    async def aclose(self) -> None:
        """Close the history and forget everything read from the files."""
        self._listeners.clear()
        await self._stop_watching()
        self._compact_cache = None
        self._search_index = None
        await self._run(self._journal.close)

    def _live_entries(self, index: Index) -> tuple[list[HistoryEntry], list[UnreadableRecord]]:
        """The entries of the live records whose latest line reads, and those whose whole
        entry (not in the index) does not; call it inside read()."""
        entries, failed = [], []
        for entry in self._journal.entries_at([index.slots[name] for name in index.live]):
            if isinstance(entry, BadLine):
                failed.append(unreadable(entry.name, entry.reason))
            else:
                entries.append(entry)
        return entries, failed

    def _live_entry(self, index: Index, name: str) -> HistoryEntry:
        """The entry of the live record called name: NotFound if there is none,
        UnreadableRecords if it does not read; call it inside read() or commit()."""
        slot = index.slots.get(name)
        if slot is None or slot.removed:
            raise NotFound(f"no live record named {name!r}")
        reason = index.unreadable.get(name)
        if reason is None:
            entry = self._journal.entry_at(slot)
            if not isinstance(entry, BadLine):
                return entry
            reason = entry.reason
        raise UnreadableRecords.found(self._where, [UnreadableRecord(name, reason)])

    def _read_all(self, index: Index, answer: _T, failed: Sequence[UnreadableRecord] = ()) -> _T:
        """answer, a read's of every live record; or UnreadableRecords with it, naming the
        records the index found unreadable and the failed ones."""
        every = sorted([*failed, *unreadable_records(index)])
        if every:
            raise UnreadableRecords.found(self._where, every, answer)
        return answer

    async def _read(self, operation: Callable[[Index], _T]) -> _T:
        return await self._run(self._journal.read, operation)

    async def _run(self, func: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        # The one boundary every operation crosses: off the event loop, errors translated;
        # the writes it came across are announced back on the loop, to whoever listens.
        try:
            with _translated(self.root):
                return await asyncio.to_thread(func, *args, **kwargs)
        finally:
            if self._listeners:
                for change in self._journal.take_changes():
                    for listener in list(self._listeners):
                        listener(change)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._poll_seconds)
            try:
                await self._read(_nothing)
            except LazyMemoryError as error:
                logger.warning("cannot look for changes in the store: %s", error.message)

    async def _stop_watching(self) -> None:
        if self._watcher is None:
            return
        self._watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._watcher
        self._watcher = None
        await self._run(self._journal.record_changes, False)

    def _read_compact(self) -> Compact | None:
        try:
            file = self._compact.open("rb")
        except FileNotFoundError:
            return None
        with file, _translated(self._compact):
            key = file_key(os.fstat(file.fileno()))
            if self._compact_cache is not None and self._compact_cache[0] == key:
                return self._compact_cache[1]
            compact = Compact.model_validate_json(file.read())
        self._compact_cache = (key, compact)
        return compact

    def _replace_compact(self, data: bytes) -> None:
        create_data_dir(self.root)
        now = time.time()
        for temp in self.root.glob(f".{COMPACT_FILE}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                if now - temp.stat().st_mtime > _STALE_COMPACT_SECONDS:
                    temp.unlink()
        replace_file(self._compact, data, _mode(self._compact))

    def _clear_compact(self) -> None:
        # A write like any other: it makes the directory, though there is nothing to remove.
        create_data_dir(self.root)
        self._compact.unlink(missing_ok=True)


def _nothing(_: Index) -> None:
    """A read that only brings the index up to date (and so notes what changed)."""


def _mode(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o644


@contextlib.contextmanager
def _translated(path: Path) -> Iterator[None]:
    """Turn OS and parse failures into the engine's typed errors, each as one line."""
    try:
        yield
    except ValidationError as error:
        raise corrupt(path, validation_reason(error)) from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise corrupt(path, str(error)) from error
    except UnicodeEncodeError as error:
        raise InvalidRecord("the record is not valid UTF-8 text") from error
    except OSError as error:
        where = error.filename or path
        reason = error.strerror or str(error)
        raise StorageUnavailable(f"cannot use the store at {where}: {reason}") from error
