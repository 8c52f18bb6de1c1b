"""The files backend: the store as plain JSON files in one directory, shared by many processes.

`memory-history.json` is the append-only list of writes and the source of truth;
`memories.json` is the current state of every name ever written, plus how many history
entries it reflects; `memory-compact.json` is the compact slot. Writers serialize on an
exclusive `flock`, re-read both files under it and replace each file atomically by rename,
the history first. A writer killed between the two renames leaves memories.json behind the
history, and the next writer (or the next open) rolls it forward.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from lazy_memory.adapters.durable import exclusive_lock, stage, sync_directory
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound, StorageUnavailable
from lazy_memory.engine.records import (
    Actor,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    history_entry,
    record_after,
)
from lazy_memory.engine.search import SearchHit, SearchIndex, SearchQuery

_MEMORIES = "memories.json"
_HISTORY = "memory-history.json"
_COMPACT = "memory-compact.json"
_LOCK = ".memory.lock"
# put_compact takes no lock, so only a compact temp file this old is surely abandoned.
_STALE_COMPACT_SECONDS = 3600.0
_HISTORY_LIST = TypeAdapter(list[HistoryEntry])

_P = ParamSpec("_P")
_T = TypeVar("_T")
_FileKey = tuple[int, int, int]


class _Stored(Record):
    """A name's latest state in memories.json; a tombstone keeps its last content."""

    deleted: bool = False


class _State(BaseModel):
    """The whole of memories.json."""

    history_length: int = 0
    records: dict[str, _Stored] = {}


class FileStorage:
    """The Storage port over JSON files under one directory, safe across processes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._memories = root / _MEMORIES
        self._history = root / _HISTORY
        self._compact = root / _COMPACT
        self._lock = root / _LOCK
        self._cache: dict[Path, tuple[_FileKey, Any]] = {}
        # The search index of one parsed memories.json, held with it: the cache hands out
        # the same state object until the file changes, so identity says the index is fresh.
        self._search_index: tuple[_State, SearchIndex] | None = None

    @classmethod
    async def open(cls, root: Path) -> FileStorage:
        """Open the store under root, creating the directory and recovering a torn write."""
        storage = cls(root)
        await storage._run(storage._open_sync)
        return storage

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        records = (await self._run(self._state)).records
        return [_public(records[name]) for name in sorted(records) if not records[name].deleted]

    async def get_record(self, name: str) -> Record:
        """The live record called name; NotFound if it never existed or was removed."""
        stored = (await self._run(self._state)).records.get(name)
        if stored is None or stored.deleted:
            raise NotFound(f"no live record named {name!r}")
        return _public(stored)

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

        def change(state: _State) -> HistoryEntry:
            current = state.records.get(content.name)
            latest = current.revision if current is not None else 0
            if if_revision is not None and if_revision != latest:
                raise Conflict(
                    f"{content.name!r} is at revision {latest}, "
                    f"not the expected revision {if_revision}"
                )
            return history_entry(
                content, revision=latest + 1, operation=operation, actor=actor, at=at
            )

        return record_after(await self._run(self._commit, change))

    async def remove_record(self, name: str, *, actor: Actor, at: datetime) -> HistoryEntry:
        """Tombstone a live record as its next revision; NotFound if it is not live."""

        def change(state: _State) -> HistoryEntry:
            current = state.records.get(name)
            if current is None or current.deleted:
                raise NotFound(f"no live record named {name!r}")
            revision = current.revision + 1
            return history_entry(
                current, revision=revision, operation=Operation.REMOVE, actor=actor, at=at
            )

        return await self._run(self._commit, change)

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every history entry in the order written, or those of one name (maybe none)."""
        entries = await self._run(self._read, self._history, _HISTORY_LIST.validate_python)
        return [entry for entry in entries or [] if name is None or entry.name == name]

    async def live_revisions(self) -> dict[str, int]:
        """The current revision of every live record."""
        records = (await self._run(self._state)).records
        return {name: stored.revision for name, stored in records.items() if not stored.deleted}

    async def removed_since(self, watermark: Mapping[str, int]) -> list[str]:
        """Names in watermark that are tombstoned now, in name order."""
        records = (await self._run(self._state)).records
        return sorted(name for name in watermark if name in records and records[name].deleted)

    async def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit live records for query, from an index rebuilt when the file changes."""
        return await self._run(self._search, query, limit)

    async def get_compact(self) -> Compact | None:
        """The compact slot's content, or None when it is empty."""
        return await self._run(self._read, self._compact, Compact.model_validate)

    async def put_compact(self, compact: Compact) -> None:
        """Overwrite the compact slot atomically."""
        await self._run(self._replace_all, {self._compact: compact.model_dump(mode="json")})

    async def clear_compact(self) -> None:
        """Empty the compact slot."""
        await self._run(self._compact.unlink, missing_ok=True)

    async def aclose(self) -> None:
        """Forget cached file contents; no lock or handle outlives an operation."""
        self._cache.clear()
        self._search_index = None

    async def _run(self, func: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
        # The one boundary every operation crosses: off the event loop, errors translated.
        with _translated(self.root):
            return await asyncio.to_thread(func, *args, **kwargs)

    def _open_sync(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self._lock):
            state, history = self._load_locked()
            if _roll_forward(state, history):
                self._replace_all({self._memories: state.model_dump(mode="json")})

    def _commit(self, change: Callable[[_State], HistoryEntry]) -> HistoryEntry:
        """Append the entry change makes from the current state, both files replaced."""
        with exclusive_lock(self._lock):
            state, history = self._load_locked()
            _roll_forward(state, history)  # finish a torn write before judging this one
            entry = change(state)
            history.append(entry)
            _roll_forward(state, history)
            self._replace_all(
                {
                    self._history: [item.model_dump(mode="json") for item in history],
                    self._memories: state.model_dump(mode="json"),
                }
            )
            # Only under the lock is the file on disk surely the one just written.
            self._remember(self._history, history)
            self._remember(self._memories, state)
        return entry

    def _load_locked(self) -> tuple[_State, list[HistoryEntry]]:
        """Both files parsed afresh (another process may have written), stale temps removed."""
        self._remove_stale_temps()
        state = self._read(self._memories, _State.model_validate, fresh=True) or _State()
        history = self._read(self._history, _HISTORY_LIST.validate_python, fresh=True) or []
        if state.history_length > len(history):
            raise StorageUnavailable(
                f"the store at {self._memories} is corrupt: it reflects {state.history_length} "
                f"history entries but {self._history.name} holds {len(history)}"
            )
        return state, history

    def _remove_stale_temps(self) -> None:
        now = time.time()
        for name in (_MEMORIES, _HISTORY, _COMPACT):
            for temp in self.root.glob(f".{name}.*.tmp"):
                with contextlib.suppress(FileNotFoundError):
                    if name != _COMPACT or now - temp.stat().st_mtime > _STALE_COMPACT_SECONDS:
                        temp.unlink()

    def _state(self) -> _State:
        return self._read(self._memories, _State.model_validate) or _State()

    def _search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        state = self._state()
        if self._search_index is None or self._search_index[0] is not state:
            live = [stored for stored in state.records.values() if not stored.deleted]
            self._search_index = (state, SearchIndex(live))
        return self._search_index[1].search(query, limit)

    def _read(self, path: Path, parse: Callable[[Any], _T], *, fresh: bool = False) -> _T | None:
        """The parsed file, None if absent; unchanged files come from the cache unless fresh."""
        try:
            file = path.open("rb")
        except FileNotFoundError:
            return None
        with file, _translated(path):
            key = _key(os.fstat(file.fileno()))
            cached = self._cache.get(path)
            if not fresh and cached is not None and cached[0] == key:
                return cast(_T, cached[1])
            value = parse(json.loads(file.read().decode("utf-8")))
        if not fresh:
            self._cache[path] = (key, value)
        return value

    def _remember(self, path: Path, value: object) -> None:
        self._cache[path] = (_key(path.stat()), value)

    def _replace_all(self, contents: Mapping[Path, object]) -> None:
        """Write every file in order, each atomically: all temps staged before any rename."""
        staged: list[tuple[Path, Path]] = []
        try:
            for target, data in contents.items():
                staged.append((stage(target, _encode(data), _mode(target)), target))
            for temp, target in staged:
                os.replace(temp, target)
                sync_directory(self.root)
        finally:
            for temp, _ in staged:
                with contextlib.suppress(OSError):
                    temp.unlink(missing_ok=True)


def _roll_forward(state: _State, history: list[HistoryEntry]) -> bool:
    """Apply the history entries state does not reflect yet; True if there were any."""
    missing = history[state.history_length :]
    for entry in missing:
        deleted = entry.operation is Operation.REMOVE
        state.records[entry.name] = _Stored(**dict(record_after(entry)), deleted=deleted)
    state.history_length = len(history)
    return bool(missing)


def _public(stored: _Stored) -> Record:
    return Record(**stored.model_dump(exclude={"deleted"}))


def _key(status: os.stat_result) -> _FileKey:
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def _encode(data: object) -> bytes:
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


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
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as error:
        raise StorageUnavailable(f"the store at {path} is corrupt: {_reason(error)}") from error
    except UnicodeEncodeError as error:
        raise InvalidRecord("the record is not valid UTF-8 text") from error
    except OSError as error:
        where = error.filename or path
        reason = error.strerror or str(error)
        raise StorageUnavailable(f"cannot use the store at {where}: {reason}") from error


def _reason(error: ValueError) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        location = ".".join(str(part) for part in first["loc"]) or "top level"
        return f"{location}: {first['msg']}"
    return str(error)
