"""What a launch context is rendered from, read for the launch hook without the models.

The hook runs at every session start, and right after any write it must read the store:
through the engine that is pydantic, asyncio and MemoryService, several times the cost of the
process. For a SQLite or a files store it reads here instead, through the backend's own
reads, which hand over plain rows: on SQLite the index, the compact's JSON and the names
removed since, queried by sqlite/index.py on a reader of its own (sqlite/reader.py: nothing
created, no write lock); on the files backend the same through its journal, which reads what
it wrote with the json module (files/journal.py). The engine's one renderer turns them into
the launch context (engine/context.py, engine/delivery.py).

A compact is stored as its model's JSON, and only the model says whether it reads: the first
hook that meets a compact asks it, and keeps the compact's digest with its launch context
(launch/cache.py); a later hook that finds the same compact reads its summary and watermark
with the json module. Anything that cannot be read so (a store to migrate or of the first
format, a file or a compact the models refuse or would convert) raises NotRead, and the hook
renders through the engine instead, which says what is wrong as every other way in does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from lazy_memory.adapters.config import Settings
from lazy_memory.engine.constants import SQLITE_FILE

if TYPE_CHECKING:
    from lazy_memory.engine.index import IndexEntry, UnreadableRecord

LIGHT_BACKENDS = ("sqlite", "files")
"""The backends whose stores the hook reads without the engine."""


class NotRead(Exception):
    """The store's state cannot be read without the engine: the engine renders the launch
    context instead."""


class KeptCompact(NamedTuple):
    """What a launch context shows of a compact (engine/context.py CompactView)."""

    summary: str
    watermark: dict[str, int]


class LaunchState(NamedTuple):
    """The live index, the compact and the names removed since it, as launches inject them
    (engine/launching.py's LaunchState, read without the models)."""

    records: list[IndexEntry]
    compact: KeptCompact | None
    removed: list[str]
    compact_digest: str | None
    """The digest of the compact's stored JSON, which its model accepts."""
    unreadable: list[UnreadableRecord]
    """The live records whose rows do not read: the launch context names them in one line."""


def launch_state(settings: Settings, trusted: str | None) -> LaunchState:
    """The state of the configured SQLite or files store; trusted is the digest of a compact
    the model accepted before. Raises NotRead when only the engine can read it."""
    if settings.backend not in LIGHT_BACKENDS or settings.remote:
        raise NotRead(f"the {settings.backend} backend is read through the engine")
    if settings.backend == "sqlite":
        return _sqlite_state(settings.data_dir / SQLITE_FILE, trusted)
    return _files_state(settings.data_dir, trusted)


def _sqlite_state(path: Path, trusted: str | None) -> LaunchState:
    from lazy_memory.adapters.sqlite.failures import leniently
    from lazy_memory.adapters.sqlite.index import compact_json, index, removed_since
    from lazy_memory.adapters.sqlite.reader import Reader

    reader = Reader(path)
    failed: list[UnreadableRecord] = []
    try:
        records = reader.read(leniently(lambda connection: index(connection, failed)))
        compact, digest = _compact(reader.read(compact_json), trusted)
        removed = []
        if compact is not None:
            watermark = compact.watermark
            removed = reader.read(lambda connection: removed_since(connection, watermark))
    finally:
        reader.close()
    return LaunchState(records, compact, removed, digest, failed)


def _files_state(root: Path, trusted: str | None) -> LaunchState:
    from lazy_memory.adapters.files.index import index_batches, unreadable_records
    from lazy_memory.adapters.files.journal import Journal
    from lazy_memory.engine.constants import COMPACT_FILE

    journal = Journal(root)
    try:
        records, failed = journal.read(
            lambda index: (
                [entry for batch in index_batches(index) for entry in batch],
                unreadable_records(index),
            )
        )
        try:
            stored: bytes | None = (root / COMPACT_FILE).read_bytes()
        except FileNotFoundError:
            stored = None
        compact, digest = _compact(stored, trusted)
        watermark = {} if compact is None else compact.watermark
        removed = journal.read(lambda index: index.removed_since(watermark))
    finally:
        journal.close()
    return LaunchState(records, compact, removed, digest, failed)


def _compact(stored: Any, trusted: str | None) -> tuple[KeptCompact | None, str | None]:
    """The compact stored JSON holds and its digest, asking its model only if the digest is
    not the trusted one; (None, None) for an empty slot."""
    if stored is None:
        return None, None
    if not isinstance(stored, str | bytes):
        raise NotRead("the compact slot does not hold JSON text")
    try:
        data = stored.encode("utf-8") if isinstance(stored, str) else stored
    except UnicodeEncodeError:
        raise NotRead("the compact is not valid UTF-8 text") from None
    from hashlib import blake2b

    digest = blake2b(data, digest_size=16).hexdigest()
    if digest != trusted:
        _check_with_model(stored)
    try:
        value = json.loads(data)
    except ValueError:
        raise NotRead("the compact's JSON reads only through its model") from None
    summary = value.get("summary") if isinstance(value, dict) else None
    watermark = value.get("watermark") if isinstance(value, dict) else None
    # Anything the model would convert (a revision given as "3") is for it to read.
    if type(summary) is not str or type(watermark) is not dict:
        raise NotRead("the compact reads only through its model")
    if not all(type(revision) is int for revision in watermark.values()):
        raise NotRead("the compact's watermark reads only through its model")
    return KeptCompact(summary, watermark), digest


def _check_with_model(stored: str | bytes) -> None:
    """Raise NotRead unless the compact's model reads it, as the backend's own read does."""
    from pydantic import ValidationError

    from lazy_memory.engine.compact import Compact

    try:
        Compact.model_validate_json(stored)
    except ValidationError:
        raise NotRead("the compact's model does not read it") from None
