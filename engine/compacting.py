"""The compaction use case against the store: `lazy memory compact`'s plan, the compaction
itself, `--show`'s status and `--clear`.

The records and their history are only read. A candidate must shrink the plain index and be
no bigger than what launches inject now (compaction.measure). auto falls back to the
mechanical generator on any model failure or rejected summary; llm fails loudly instead. A
rejected candidate writes nothing. The generators and the never-grow rule are compaction.py's.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from lazy_memory.engine import compaction
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import CompactOutcome, Mode, measure
from lazy_memory.engine.context import MEASURED_ROLE, assembled_size, written_since
from lazy_memory.engine.errors import CompactRejected, LLMUnavailable, StorageUnavailable
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.launching import launch_state
from lazy_memory.engine.records import Actor, Record
from lazy_memory.engine.saving import recall_live

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Clock, Storage, Summarizer


class CompactPlan(BaseModel):
    """What `lazy memory compact` is about to do, shown before any model call."""

    mode: Mode
    record_count: int
    last_generated_at: datetime | None
    generator: str
    model: str | None


class CompactStatus(BaseModel):
    """The compact slot as `--show` reports it, against the records as they are now."""

    compact: Compact | None
    covered: int
    bytes_with: int
    bytes_without: int
    written_since: list[Record]
    removed_since: list[str]


async def compact_plan(storage: Storage, summarizer: Summarizer | None, mode: Mode) -> CompactPlan:
    """What a compaction in mode would do, to show the user before any model call."""
    records = await storage.list_index()
    if not records:
        raise CompactRejected("there are no records to compact")
    current = await storage.get_compact()
    if mode is Mode.MECHANICAL or summarizer is None:
        generator, model = compaction.MECHANICAL, None
    else:
        generator, model = summarizer.name, summarizer.model
    return CompactPlan(
        mode=mode,
        record_count=len(records),
        last_generated_at=None if current is None else current.generated_at,
        generator=generator,
        model=model,
    )


async def compact(
    storage: Storage,
    summarizer: Summarizer | None,
    clock: Clock,
    actor: Actor,
    mode: Mode,
) -> CompactOutcome:
    """Generate a compact from the records and store it, if it never grows the section."""
    records, current, removed, *_ = await launch_state(storage)
    if not records:
        raise CompactRejected("there are no records to compact")
    fallback_reason: str | None = None
    omitted: list[IndexEntry] = []
    candidate: Compact | None = None
    if mode is not Mode.MECHANICAL:
        try:
            candidate, omitted = await _llm_candidate(records, summarizer, clock, actor)
        except LLMUnavailable as error:
            if mode is Mode.LLM:
                raise
            fallback_reason = error.message
    judged = None if candidate is None else measure(records, candidate, current, removed)
    model_rejected: str | None = None
    if candidate is not None and judged is not None and not judged.accepted and mode is Mode.AUTO:
        fallback_reason = f"the model's summary {compaction.why_rejected(judged)}"
        model_rejected = compaction.generator_label(candidate.generator, candidate.model)
        candidate, omitted, judged = None, [], None
    if candidate is None or judged is None:
        candidate = _new_compact(
            records,
            compaction.mechanical_summary(records),
            compaction.MECHANICAL,
            None,
            clock,
            actor,
            model_rejected,
        )
        judged = measure(records, candidate, current, removed)
    if not judged.accepted:
        raise compaction.reject(
            candidate, judged, kept_old=current is not None, fallback_reason=fallback_reason
        )
    record_count = len(records)
    # At 100,000 records the index and the old compact are tens of megabytes: let them go
    # before the new compact is serialized for the store, and answered.
    del records, current
    await storage.put_compact(candidate)
    return CompactOutcome(
        compact=candidate,
        record_count=record_count,
        bytes_without=judged.without,
        bytes_with=judged.candidate,
        fallback_reason=fallback_reason,
        omitted=[record.name for record in omitted],
    )


async def compact_status(storage: Storage) -> CompactStatus:
    """The compact, what it covers, and what was written or removed since."""
    records, compact, removed, *_ = await launch_state(storage)
    newer = [] if compact is None else written_since(records, compact)
    return CompactStatus(
        compact=compact,
        covered=0 if compact is None else len(compact.watermark),
        bytes_with=assembled_size(MEASURED_ROLE, records, compact, removed),
        bytes_without=assembled_size(MEASURED_ROLE, records, None, []),
        written_since=await _records_named(storage, [record.name for record in newer]),
        removed_since=removed,
    )


async def clear_compact(storage: Storage) -> bool:
    """Empty the compact slot; True if there was a compact to clear."""
    try:
        existed = await storage.get_compact() is not None
    except StorageUnavailable:
        existed = True  # an unreadable compact is still one to clear
    if existed:  # an empty slot needs no write (and a store not started yet, no start)
        await storage.clear_compact()
    return existed


async def _records_named(storage: Storage, names: list[str]) -> list[Record]:
    """The live records of these names in full, leaving out any removed meanwhile."""
    found = [await recall_live(storage, name) for name in names]
    return [record for record in found if record is not None]


async def _llm_candidate(
    records: list[IndexEntry], summarizer: Summarizer | None, clock: Clock, actor: Actor
) -> tuple[Compact, list[IndexEntry]]:
    if summarizer is None:
        raise LLMUnavailable(compaction.NO_SUMMARIZER)
    answer = await summarizer.summarize(compaction.summary_prompt(records))
    if not answer.strip():
        raise LLMUnavailable("the model returned an empty answer")
    summary, omitted = compaction.repaired(answer, records)
    compact = _new_compact(records, summary, summarizer.name, summarizer.model, clock, actor)
    return compact, omitted


def _new_compact(
    records: list[IndexEntry],
    summary: str,
    generator: str,
    model: str | None,
    clock: Clock,
    actor: Actor,
    model_rejected: str | None = None,
) -> Compact:
    return compaction.new_compact(
        records,
        summary,
        generator=generator,
        model=model,
        generated_at=clock.now(),
        generated_by=actor,
        model_rejected=model_rejected,
    )
