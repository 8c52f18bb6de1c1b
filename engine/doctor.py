"""`lazy doctor`'s diagnosis: the injected size, the compact's freshness, and what helps.

The remedy is conditional: compact when there is no compact (and one would help) or the
compact is behind the records; otherwise curate the records or raise warn_bytes. A current
compact is never the thing to redo: regenerating it from the same records cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import mechanical_summary, new_compact, shrinks
from lazy_memory.engine.context import assembled_size, written_since
from lazy_memory.engine.index import Indexed
from lazy_memory.engine.records import Actor, ActorKind


class Remedy(StrEnum):
    """What doctor recommends."""

    NONE = "none"
    COMPACT = "compact"
    CURATE = "curate"


class Diagnosis(BaseModel):
    """Everything doctor found, and the one remedy it recommends."""

    bytes: int
    bytes_without_compact: int
    warn_bytes: int
    over_threshold: bool
    record_count: int
    compact_exists: bool
    compact_generated_at: datetime | None = None
    compact_generator: str | None = None
    written_since_compact: list[str] = []
    removed_since_compact: list[str] = []
    remedy: Remedy
    advice: str
    importable: list[str] = []


def diagnose(
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: list[str],
    warn_bytes: int,
    now: datetime,
    *,
    importable: list[str] | None = None,
) -> Diagnosis:
    """Measure what a launch injects and decide what, if anything, would help."""
    size = assembled_size(records, compact, removed)
    plain = assembled_size(records, None, [])
    newer = [] if compact is None else [record.name for record in written_since(records, compact)]
    behind = compact is not None and bool(newer or removed)
    remedy, advice = _remedy(size, warn_bytes, records, compact, behind, now)
    return Diagnosis(
        bytes=size,
        bytes_without_compact=plain,
        warn_bytes=warn_bytes,
        over_threshold=size > warn_bytes,
        record_count=len(records),
        compact_exists=compact is not None,
        compact_generated_at=None if compact is None else compact.generated_at,
        compact_generator=None if compact is None else compact.generator,
        written_since_compact=newer,
        removed_since_compact=removed,
        remedy=remedy,
        advice=advice,
        importable=importable or [],
    )


def _remedy(
    size: int,
    warn_bytes: int,
    records: Sequence[Indexed],
    compact: Compact | None,
    behind: bool,
    now: datetime,
) -> tuple[Remedy, str]:
    if size <= warn_bytes:
        return Remedy.NONE, f"The injected memory is within its advisory size ({warn_bytes} bytes)."
    curate = (
        "Curate the records: remove stale ones (`lazy memory rm NAME`), merge overlapping ones, "
        "shorten long descriptions; or raise [memory] warn_bytes in lazy.toml if this size "
        "is acceptable."
    )
    if behind:
        return Remedy.COMPACT, (
            "The compact is behind the records: run `lazy memory compact` to fold the newer "
            "writes and removals into it."
        )
    if compact is None:
        trial = new_compact(
            records,
            mechanical_summary(records),
            generator="mechanical",
            model=None,
            generated_at=now,
            generated_by=Actor(kind=ActorKind.SYSTEM, detail="doctor"),
        )
        if shrinks(records, trial):
            return Remedy.COMPACT, "There is no compact: run `lazy memory compact` to write one."
        return Remedy.CURATE, "A compact would not make this section smaller. " + curate
    return Remedy.CURATE, "The compact is current, so compacting again cannot help. " + curate
