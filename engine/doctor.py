"""`lazy doctor`'s diagnosis: the injected size, the compact's freshness, and what helps.

The remedy is conditional, and it is always one that then succeeds (never a circle with
`lazy memory compact`): compact when a compact of the records would be accepted by the
never-grow rule (compaction.measure, the same check the command makes) and there is no
compact or it is behind; clear a compact that costs more than the plain index when a
recompact would be rejected; otherwise curate the records or raise warn_bytes. A current
compact is never the thing to redo: regenerating it from the same records cannot help.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import (
    CURATE,
    clear_remedy,
    measure,
    mechanical_summary,
    new_compact,
    what_helps,
    why_rejected,
)
from lazy_memory.engine.context import Role, assembled_size, launch_context, written_since
from lazy_memory.engine.delivery import deliver, harness_length
from lazy_memory.engine.index import Indexed
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.wording import counted


class Remedy(StrEnum):
    """What doctor recommends."""

    NONE = "none"
    COMPACT = "compact"
    CLEAR = "clear"
    """`lazy memory compact --clear`: the compact costs more than the plain index."""
    CURATE = "curate"


class HookFit(BaseModel):
    """What a launch through a session-start hook shows of the section, and what helps."""

    limit_chars: int
    chars: int
    """The builder's whole section as the harness counts it."""
    records: int
    listed: int
    """How many records a hook launch lists inline (all, when the section fits)."""
    advice: str


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
    compact_error: str | None = None
    """Why the compact slot cannot be read (launches then get the plain index)."""
    hook: HookFit | None = None


def diagnose(
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: list[str],
    warn_bytes: int,
    now: datetime,
    *,
    importable: list[str] | None = None,
    compact_error: str | None = None,
    hook_limit_chars: int | None = None,
) -> Diagnosis:
    """Measure what a launch injects and decide what, if anything, would help."""
    size = assembled_size(records, compact, removed)
    plain = assembled_size(records, None, [])
    newer = [] if compact is None else [record.name for record in written_since(records, compact)]
    behind = compact is not None and bool(newer or removed)
    remedy, advice = _remedy(size, plain, warn_bytes, records, compact, removed, behind, now)
    if compact_error is not None:
        advice = (
            f"The compact cannot be read ({compact_error}), so launches get the plain index: "
            "run `lazy memory compact --clear` to remove it. " + advice
        )
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
        compact_error=compact_error,
        hook=None
        if hook_limit_chars is None
        else hook_fit(records, compact, removed, warn_bytes, hook_limit_chars, now),
    )


def hook_fit(
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: list[str],
    warn_bytes: int,
    limit: int,
    now: datetime,
) -> HookFit:
    """How many records a hook launch shows inline, and the remedy that works if not all."""
    context = launch_context(Role.BUILDER, records, compact, removed, warn_bytes)
    delivery = deliver(context, records, limit)
    shown = f"A hook launch shows {delivery.listed:,} of {counted(len(records), 'record')} inline"
    if not delivery.fitted:
        advice = f"{shown}: the whole section fits Claude Code's hook limit ({limit:,} characters)."
    else:
        remedies = []
        trial = _mechanical_trial(records, now)
        if (
            harness_length(launch_context(Role.BUILDER, records, trial, [], warn_bytes).text)
            <= limit
            and measure(records, trial, compact, removed).accepted
        ):
            remedies.append("run `lazy memory compact`: a compact of these records fits it")
        remedies.append(
            "start orchestrated sessions with `lazy launch claude`, which carries the whole "
            "section in the system prompt"
        )
        remedies.append("curate the records so the index fits")
        advice = (
            f"{shown} (the section is {delivery.chars:,} characters; Claude Code shows a hook's "
            f"output whole only up to {limit:,}); the rest are named by one line telling the "
            f"model to call lazy_memory_recall(). To show them all: {'; or '.join(remedies)}."
        )
    return HookFit(
        limit_chars=limit,
        chars=harness_length(context.text),
        records=len(records),
        listed=delivery.listed,
        advice=advice,
    )


def _mechanical_trial(records: Sequence[Indexed], now: datetime) -> Compact:
    return new_compact(
        records,
        mechanical_summary(records),
        generator="mechanical",
        model=None,
        generated_at=now,
        generated_by=Actor(kind=ActorKind.SYSTEM, detail="doctor"),
    )


def _remedy(
    size: int,
    plain: int,
    warn_bytes: int,
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: list[str],
    behind: bool,
    now: datetime,
) -> tuple[Remedy, str]:
    if size <= warn_bytes:
        return Remedy.NONE, f"The injected memory is within its advisory size ({warn_bytes} bytes)."
    if compact is not None and not behind:
        if size > plain:
            return Remedy.CLEAR, (
                "The compact is current but costs more than the plain index; "
                + clear_remedy(size, plain)
                + "."
            )
        return Remedy.CURATE, (
            "The compact is current, so compacting again cannot help. " + _sentence(CURATE)
        )
    # The mechanical compact is what `lazy memory compact` falls back to: if the never-grow
    # rule accepts it, the command succeeds whatever a model does.
    judged = measure(records, _mechanical_trial(records, now), compact, removed)
    if judged.accepted:
        if compact is None:
            return Remedy.COMPACT, "There is no compact: run `lazy memory compact` to write one."
        return Remedy.COMPACT, (
            "The compact is behind the records: run `lazy memory compact` to fold the newer "
            "writes and removals into it."
        )
    if compact is None:
        return Remedy.CURATE, "A compact would not make this section smaller. " + _sentence(CURATE)
    remedy = Remedy.CLEAR if judged.clearing_helps else Remedy.CURATE
    return remedy, (
        "The compact is behind the records, but `lazy memory compact` would be rejected: a new "
        f"compact {why_rejected(judged)}. Instead, {what_helps(judged)}."
    )


def _sentence(clause: str) -> str:
    return clause[0].upper() + clause[1:] + "."
