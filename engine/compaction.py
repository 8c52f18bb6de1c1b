"""Compaction (docs/architecture.md, Compaction): generating a compact and the never-grow rule.

A compact is derived from the records and from nothing else: every generation reads the
records, never the previous compact. Its generators are the mechanical one (grouped by
type, every name and description kept: lossless) and a language model, whose summary is
repaired by appending, verbatim, every record it failed to name. A candidate is accepted
only if the assembled section with it is smaller than the section without any compact and no
bigger than what launches inject now (the current compact with its catch-up lines): a
compact never makes injection bigger. A rejection names the remedy that then works, the one
doctor gives too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.context import COMPACT_PREAMBLES, MEASURED_ROLE, assembled_size
from lazy_memory.engine.errors import CompactRejected
from lazy_memory.engine.index import Indexed, IndexedT, index_line, shown_description
from lazy_memory.engine.records import Actor, RecordType
from lazy_memory.engine.visible import visible_line
from lazy_memory.engine.wording import counted

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Summarizer

MECHANICAL = "mechanical"
NOT_COVERED = "## Not covered by the summary above"
CURATE = (
    "curate the records: remove stale ones (`lazy memory rm NAME`), merge overlapping ones, "
    "shorten long descriptions; or raise [memory] warn_bytes in lazy.toml if this size is "
    "acceptable"
)
"""The remedy when no compact can help (a sentence's second half: callers capitalize it)."""


NO_SUMMARIZER = "no summarizer is configured"
"""Why auto asks no model when there is no summarizer at all (a service built without one)."""


class ModelPlan(NamedTuple):
    """The model `lazy memory compact` (auto) would ask first, known without calling it."""

    label: str | None
    """`generator (model)` when a call would reach a model; None when auto would go straight
    to the mechanical generator."""
    why_none: str | None = None
    """Why no model would be called (none configured, LAZY_OFFLINE=1, no credential...)."""


NO_MODEL = ModelPlan(None, NO_SUMMARIZER)


def model_plan(summarizer: Summarizer | None) -> ModelPlan:
    """The model auto would ask, or why none: the summarizer's known failure, never a call."""
    if summarizer is None:
        return NO_MODEL
    failure = summarizer.known_failure()
    if failure is not None:
        return ModelPlan(None, failure)
    return ModelPlan(generator_label(summarizer.name, summarizer.model))


def generator_label(generator: str, model: str | None) -> str:
    """A generator as doctor and a compact name it: `anthropic (claude-haiku-4-5)`."""
    return generator if model is None else f"{generator} ({model})"


class Mode(StrEnum):
    """Which generator `lazy memory compact` uses."""

    AUTO = "auto"
    MECHANICAL = "mechanical"
    LLM = "llm"


class CompactOutcome(BaseModel):
    """What a successful compaction wrote, and how it got there."""

    compact: Compact
    record_count: int
    bytes_without: int
    bytes_with: int
    fallback_reason: str | None = None
    omitted: list[str] = []


def mechanical_summary(records: Sequence[Indexed]) -> str:
    """Every record under a heading for its type: `- name: description`, as index lines show them.

    Names and descriptions are made visible here as in every index line, so the summary (a
    prompt output) holds no control or format character and names the records as the index
    does; otherwise they are kept whole: lossless.
    """
    sections = []
    for record_type in RecordType:
        group = [record for record in records if record.type is record_type]
        if group:
            lines = [f"- {visible_line(r.name)}: {shown_description(r.description)}" for r in group]
            sections.append("\n".join([f"## {record_type.value}", *lines]))
    return "\n\n".join(sections)


def summary_prompt(records: Sequence[Indexed]) -> str:
    """The model's instructions and the index it is to summarize."""
    index = "\n".join(index_line(record) for record in records)
    return (
        "You are compacting the memory index of a software project. Coding agents read this "
        "index at the start of every session to learn what earlier sessions saved; each "
        "line is one record: `- name (type): description`.\n\n"
        "Write a shorter index that keeps all of its knowledge:\n"
        "- group the records into a few themes, and merge records whose knowledge overlaps "
        "into one line that names each of them;\n"
        "- you MUST mention every record name exactly as written, because agents fetch a "
        "record's body by its name; never drop, rename or abbreviate a name;\n"
        "- keep facts, commands and constraints precise; drop filler words;\n"
        "- answer with the summary only, as markdown, with no preamble and no closing remark; "
        "it must be shorter than the index below.\n\n"
        f"The index ({counted(len(records), 'record')}):\n{index}\n"
    )


def omitted_names(summary: str, records: Sequence[IndexedT]) -> list[IndexedT]:
    """The records whose name the summary never mentions as a whole word.

    A name is looked for as the index shows it (made visible), which is how the model read it.
    """
    return [record for record in records if not _mentions(summary, visible_line(record.name))]


def repaired(summary: str, records: Sequence[IndexedT]) -> tuple[str, list[IndexedT]]:
    """The summary with every record it omitted appended as its index line, and those records."""
    omitted = omitted_names(summary, records)
    if not omitted:
        return summary.strip(), []
    lines = [index_line(record) for record in omitted]
    return "\n".join([summary.strip(), "", NOT_COVERED, *lines]), omitted


def new_compact(
    records: Sequence[Indexed],
    summary: str,
    *,
    generator: str,
    model: str | None,
    generated_at: datetime,
    generated_by: Actor,
    model_rejected: str | None = None,
) -> Compact:
    """A compact of summary, whose watermark is exactly the records it was made from."""
    return Compact(
        preamble=COMPACT_PREAMBLES[MEASURED_ROLE],
        summary=summary,
        generator=generator,
        model=model,
        generated_at=generated_at,
        generated_by=generated_by,
        watermark={record.name: record.revision for record in records},
        model_rejected=model_rejected,
    )


class Sizes(NamedTuple):
    """What the never-grow rule compares: UTF-8 bytes of three assembled sections."""

    without: int
    """The plain index: the section with no compact."""
    now: int
    """What launches inject now: the current compact and its catch-up lines, else the plain
    index."""
    candidate: int
    """The section with the candidate, which covers every record (nothing is newer)."""

    @property
    def accepted(self) -> bool:
        """Smaller than the plain index, and no bigger than what launches inject now."""
        return self.candidate < self.without and self.candidate <= self.now

    @property
    def clearing_helps(self) -> bool:
        """What launches inject now costs more than the plain index would."""
        return self.now > self.without


def measure(
    records: Sequence[Indexed],
    candidate: Compact,
    current: Compact | None,
    removed: Sequence[str],
) -> Sizes:
    """The sizes that judge candidate, against the current compact (and what was removed since)."""
    without = assembled_size(MEASURED_ROLE, records, None, [])
    now = without if current is None else assembled_size(MEASURED_ROLE, records, current, removed)
    return Sizes(
        without=without, now=now, candidate=assembled_size(MEASURED_ROLE, records, candidate, [])
    )


def why_rejected(judged: Sizes) -> str:
    """What a rejected candidate would do to the section, with the sizes it was judged on."""
    if judged.candidate >= judged.without:
        injected = "" if judged.now == judged.without else f", {judged.now} bytes injected now"
        return (
            f"would not shrink the injected memory section ({judged.candidate} bytes with it, "
            f"{judged.without} bytes without{injected})"
        )
    return (
        f"would make the injected memory section bigger than it is now ({judged.candidate} bytes "
        f"with it, {judged.now} bytes now with the current compact and what was written since it, "
        f"{judged.without} bytes with the plain index)"
    )


def clear_remedy(now: int, without: int) -> str:
    """The remedy when what launches inject now costs more than the plain index."""
    return (
        f"run `lazy memory compact --clear`: the plain index ({without} bytes) is smaller than "
        f"what launches inject now ({now} bytes)"
    )


def what_helps(judged: Sizes) -> str:
    """The remedy that works once a compact of these records is rejected; doctor's too."""
    return clear_remedy(judged.now, judged.without) if judged.clearing_helps else CURATE


def sizes(records: Sequence[Indexed], candidate: Compact) -> tuple[int, int]:
    """Bytes of the section without any compact, and with the candidate (nothing newer)."""
    return assembled_size(MEASURED_ROLE, records, None, []), assembled_size(
        MEASURED_ROLE, records, candidate, []
    )


def shrinks(records: Sequence[Indexed], candidate: Compact) -> bool:
    """True if the assembled section with the candidate is strictly smaller than without."""
    without, with_candidate = sizes(records, candidate)
    return with_candidate < without


def reject(
    candidate: Compact,
    judged: Sizes,
    *,
    kept_old: bool,
    fallback_reason: str | None = None,
) -> CompactRejected:
    """The error for a rejected candidate: its sizes, why auto fell back, and what helps."""
    kept = "the previous compact is kept and still injected" if kept_old else "no compact"
    # The reason auto fell back is said even here: it is why no model did better.
    fell_back = ""
    if fallback_reason is not None:
        fell_back = f"fell back to the mechanical generator ({fallback_reason}), but "
    return CompactRejected(
        f"{fell_back}the {candidate.generator} compact {why_rejected(judged)}: nothing was "
        f"written and {kept}. What helps instead: {what_helps(judged)}.",
        fallback_reason=fallback_reason,
    )


def _mentions(text: str, name: str) -> bool:
    # A name is mentioned only as a whole token: "api" inside "api-gateway" does not count.
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text) is not None
