"""The params and results of the memory methods (`lazy/memory/*`, `lazy/doctor`, `lazy/search`).

The results a service call returns as they are (a Record, a SavedRecord, a HistoryEntry, a
Diagnosis, an ImportResult) are the engine's own models; the rest are here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, StrictBool, model_validator

from lazy_memory.engine.compacting import CompactStatus
from lazy_memory.engine.compaction import CompactOutcome, Mode
from lazy_memory.engine.constants import (
    DEFAULT_SEARCH_LIMIT,
    MAX_SEARCH_LIMIT,
    TOOL_RESULT_LIMIT_CHARS,
)
from lazy_memory.engine.context import Role
from lazy_memory.engine.index import IndexUnavailable, UnreadableRecord
from lazy_memory.engine.records import HistoryEntry, Record, UnreadableRow
from lazy_memory.engine.search_model import SearchHit
from lazy_memory.wire.index import IndexEntry
from lazy_memory.wire.names import CONTEXT
from lazy_memory.wire.params import OneOf, Params, Sparse

CONTEXT_NEXT_PAGE = CONTEXT + ' {{"page": {page}}}'
"""How a page of the section names the request for the next one."""


class RecallParams(Params):
    """`lazy/memory/recall`: without a name, the index (all, or one page); with one, the record."""

    name: str | None = None
    page: int | None = Field(default=None, ge=1)
    page_size: int = Field(default=1000, ge=1, le=100_000)


class RecallResult(OneOf):
    """The index (`records`, with `page`/`pages` when paged) without a name, else `record`.

    On a store that cannot be read the index is `unavailable_index`'s answer instead; the
    records it holds but cannot read are left out of `records` and listed in `unreadable`.
    """

    records: list[IndexEntry] | None = None
    record: Record | None = None
    page: int | None = None
    pages: int | None = None
    unavailable: str | None = None
    """The UNAVAILABLE marker, when the store cannot be read (`records` is then null)."""
    error: str | None = None
    """Why the store cannot be read, beside the marker."""
    unreadable: list[UnreadableRow] | None = None
    """The live records the store holds but could not read, and why (absent when none)."""


def unreadable_rows(records: Sequence[UnreadableRecord]) -> dict[str, Any]:
    """A result's `unreadable` field, `[{"name": ..., "reason": ...}]`, when there are any
    records the store could not read; else nothing, so the answer is as it always was."""
    if not records:
        return {}
    return {"unreadable": [{"name": r.name, "reason": r.reason} for r in records]}


def unavailable_index(unavailable: IndexUnavailable) -> dict[str, Any]:
    """The index's answer (whole or a page) on a store that cannot be read.

    `records` is null, never an empty list: a client that reads only `records` fails on it
    rather than showing an unreadable store as one with no records. `unavailable` is the
    marker a launch gets from that store (what `lazy/memory/context` answers as its `text`),
    and `error` why.
    """
    return {"records": None, "unavailable": unavailable.marker, "error": unavailable.error}


class SaveParams(Params):
    """`lazy/memory/save`: create, update or revive a record (compare-and-swap if asked)."""

    name: str
    type: str
    description: str
    body: str
    if_revision: int | None = Field(default=None, ge=0)


class DocumentParams(Params):
    """`lazy/memory/document`: a record's read-only document, by its `lazy-memory:NAME` URI."""

    uri: str


class DocumentResult(BaseModel):
    """A record as the markdown text an editor shows for its `lazy-memory:` URI."""

    uri: str
    name: str
    text: str


class HistoryResult(BaseModel):
    """History entries, oldest first."""

    entries: list[HistoryEntry]


class ContextParams(Params):
    """`lazy/memory/context`: the memory section for a launch of this role, or one page of it."""

    role: Role
    page: int | None = Field(default=None, ge=1)
    page_chars: int = Field(default=TOOL_RESULT_LIMIT_CHARS, ge=1000)


class ContextPage(BaseModel):
    """The section, or with `page` one page of it (cut at line ends), and how many there are:
    the engine's LaunchContext (its fields, in its order) and the page."""

    role: Role
    text: str
    bytes: int
    warn_bytes: int
    over_threshold: bool
    available: bool
    compacted: bool
    error: str | None = None
    """Why the store could not be read, when it could not (available is then False)."""
    page: int = 1
    pages: int = 1


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


class CompactResult(OneOf):
    """What was generated (`outcome`), what the slot holds (`status`), or `cleared`."""

    outcome: CompactOutcome | None = None
    status: CompactStatus | None = None
    cleared: bool | None = None


class ImportParams(Params):
    """`lazy/memory/import`: preview the harness memory import, or apply it."""

    apply: StrictBool = False


class SearchParams(Params):
    """`lazy/search`: a query in the search language, and how many hits to return at most."""

    query: str
    limit: int = Field(default=DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT)
    page: int = Field(default=1, ge=1)
    """With limit as the page size: page 2 is the next limit hits."""


class SearchResult(Sparse):
    """Search hits, best first, and whether a next page has more."""

    hits: list[SearchHit]
    more: bool = False
    unreadable: list[UnreadableRow] | None = None
    """The live records the store holds but could not read, which the hits may lack (absent
    when none)."""
