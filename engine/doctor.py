"""`lazy doctor`'s diagnosis: the injected size, the compact's freshness, and what helps.

Doctor predicts `lazy memory compact` with the generator the command would use
(compaction.model_plan: auto asks the model first, unless a call could not reach it, then
falls back to the mechanical generator), and makes no model call itself. The mechanical
compact it builds and measures with the never-grow rule (compaction.measure, the check the
command makes); a model's summary only a call can judge. So its remedy is always one that
then succeeds, or, where only the model could tell, a try that says so and what helps if the
try is rejected (a rejected compact writes nothing); it never advises against a compact that
would work, and never sends the user round a circle:

- compact when there is no compact or it is behind, and the mechanical compact would be
  accepted (auto falls back to it, so the command succeeds whatever a model does);
- clear a compact that costs more than the plain index when no compact surely helps;
- try compact when only the model's summary could be accepted, and for a current compact
  written by another generator, unless that model's summary of the same records was already
  rejected (Compact.model_rejected);
- otherwise curate the records or raise warn_bytes. A current compact is never regenerated
  by the generator that wrote it: a new one would summarize the same records the same way.

Records the store holds but cannot read come first (repair): each is listed with why, and
the advice says how to replace or repair them, then what helps the size once they are
(a compact refuses to leave them out, so it waits for them).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from pydantic import BaseModel

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import (
    CURATE,
    MECHANICAL,
    NO_MODEL,
    ModelPlan,
    Sizes,
    clear_remedy,
    generator_label,
    measure,
    mechanical_summary,
    new_compact,
    what_helps,
    why_rejected,
)
from lazy_memory.engine.constants import TOOL_RESULT_LIMIT_CHARS
from lazy_memory.engine.context import (
    MEASURED_ROLE,
    Role,
    assembled_size,
    harness_length,
    launch_context,
    written_since,
)
from lazy_memory.engine.delivery import fit
from lazy_memory.engine.index import Indexed, UnreadableRecord
from lazy_memory.engine.records import Actor, ActorKind, UnreadableRow
from lazy_memory.engine.wording import counted


class Remedy(StrEnum):
    """What doctor recommends."""

    NONE = "none"
    COMPACT = "compact"
    TRY_COMPACT = "try-compact"
    """`lazy memory compact`: only the model's summary could be accepted, which doctor cannot
    know without calling the model; the advice says what helps if it is rejected."""
    CLEAR = "clear"
    """`lazy memory compact --clear`: the compact costs more than the plain index."""
    CURATE = "curate"
    REPAIR = "repair"
    """The store holds records it cannot read: replace or repair them (see REPAIR_ADVICE)."""


REPAIR_ADVICE = (
    "Launches name {them} in one line and leave {them} out; a record that cannot be read also "
    "stops `lazy memory compact`. To replace one, save it again with every field (`lazy memory "
    'save NAME -t TYPE -d "DESCRIPTION" --body-file FILE`): its history stays, and the save is '
    "its next revision. Or repair its row where the store keeps it (the reason says what is "
    "wrong), or remove the row there."
)


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
    unreadable: list[UnreadableRow] = []
    """Every live record the store holds but cannot read, and why (remedy repair)."""
    hook: HookFit | None = None
    next_compact_model: str | None = None
    """The model `lazy memory compact` would ask first (`generator (model)`); None when it
    would use the mechanical generator only, for no_model_reason."""
    no_model_reason: str | None = None


class _Store(NamedTuple):
    """What the remedy is decided on: the store as launches read it, and the model to come."""

    records: Sequence[Indexed]
    compact: Compact | None
    removed: list[str]
    behind: bool
    """There is a compact, and records were written or removed since it."""
    now: datetime
    model: ModelPlan
    unreadable: Sequence[UnreadableRecord] = ()
    """The records launches name as unreadable, in one line the sections measured hold."""


def diagnose(
    records: Sequence[Indexed],
    compact: Compact | None,
    removed: list[str],
    warn_bytes: int,
    now: datetime,
    *,
    importable: list[str] | None = None,
    compact_error: str | None = None,
    named_at_launch: Sequence[UnreadableRecord] = (),
    unreadable: Sequence[UnreadableRecord] = (),
    hook_limit_chars: int | None = None,
    model: ModelPlan = NO_MODEL,
    page_limit_chars: int = TOOL_RESULT_LIMIT_CHARS,
) -> Diagnosis:
    """Measure what a launch injects and decide what, if anything, would help.

    model is what `lazy memory compact` would ask for a summary (compaction.model_plan);
    page_limit_chars what a tool result shows whole, which the hook's closing line pages at.
    unreadable is every live record the store cannot read (Storage.unreadable_records), and
    named_at_launch those whose index line cannot be read, which launches name.
    """
    size = assembled_size(MEASURED_ROLE, records, compact, removed, named_at_launch)
    plain = assembled_size(MEASURED_ROLE, records, None, [], named_at_launch)
    newer = [] if compact is None else [record.name for record in written_since(records, compact)]
    store = _Store(records, compact, removed, bool(newer or removed), now, model, named_at_launch)
    remedy, advice = _remedy(size, plain, warn_bytes, store)
    if unreadable:
        them = "it" if len(unreadable) == 1 else "them"
        held = "a record" if len(unreadable) == 1 else counted(len(unreadable), "record")
        remedy, advice = (
            Remedy.REPAIR,
            (
                f"The store holds {held} it cannot read (listed above). "
                f"{REPAIR_ADVICE.format(them=them)} {advice}"
            ),
        )
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
        unreadable=[UnreadableRow.of(record) for record in unreadable],
        hook=None
        if hook_limit_chars is None
        else hook_fit(store, warn_bytes, hook_limit_chars, page_limit_chars),
        next_compact_model=model.label,
        no_model_reason=model.why_none,
    )


def hook_fit(store: _Store, warn_bytes: int, limit: int, page_limit: int) -> HookFit:
    """How many records a hook launch shows inline, and the remedies that work if not all."""
    records, unreadable = store.records, store.unreadable
    context = launch_context(
        Role.BUILDER, records, store.compact, store.removed, warn_bytes, unreadable
    )
    hooked = fit(context, records, limit, page_limit=page_limit, unreadable=unreadable)
    shown = f"A hook launch shows {hooked.listed:,} of {counted(len(records), 'record')} inline"
    if not hooked.fitted:
        advice = f"{shown}: the whole section fits Claude Code's hook limit ({limit:,} characters)."
    else:
        remedies = []
        trial = _mechanical_trial(store)
        if (
            harness_length(
                launch_context(Role.BUILDER, records, trial, [], warn_bytes, unreadable).text
            )
            <= limit
            and _measure(store, trial).accepted
        ):
            remedies.append("run `lazy memory compact`: a compact of these records fits it")
        elif _model_may_help(store):
            remedies.append(
                f"try `lazy memory compact`: {store.model.label}'s summary may fit it (doctor "
                "cannot know without calling the model; a rejected compact writes nothing)"
            )
        remedies.append(
            "start orchestrated sessions with `lazy launch claude`, which carries the whole "
            "section in the system prompt"
        )
        remedies.append("curate the records so the index fits")
        advice = (
            f"{shown} (the section is {hooked.chars:,} characters; Claude Code shows a hook's "
            f"output whole only up to {limit:,}); the rest are named by one line telling the "
            f"model how to read them with lazy_memory_recall(). To show them all: "
            f"{'; or '.join(remedies)}."
        )
    return HookFit(
        limit_chars=limit,
        chars=harness_length(context.text),
        records=len(records),
        listed=hooked.listed,
        advice=advice,
    )


def _mechanical_trial(store: _Store) -> Compact:
    return new_compact(
        store.records,
        mechanical_summary(store.records),
        generator=MECHANICAL,
        model=None,
        generated_at=store.now,
        generated_by=Actor(kind=ActorKind.SYSTEM, detail="doctor"),
    )


def _measure(store: _Store, candidate: Compact) -> Sizes:
    return measure(store.records, candidate, store.compact, store.removed)


def _model_may_help(store: _Store) -> bool:
    """Whether `lazy memory compact` would ask a model whose summary only a call can judge.

    Not for a current compact written by that generator (a new one summarizes the same
    records the same way), nor one written after that model's summary of them was rejected.
    """
    label, compact = store.model.label, store.compact
    if label is None:
        return False
    if compact is None or store.behind:
        return True
    return label not in (generator_label(compact.generator, compact.model), compact.model_rejected)


def _asks_the_model(store: _Store) -> str:
    return (
        f"`lazy memory compact` asks {store.model.label} first, whose summary may be smaller; "
        "doctor cannot know without calling the model"
    )


def _remedy(size: int, plain: int, warn_bytes: int, store: _Store) -> tuple[Remedy, str]:
    if size <= warn_bytes:
        return Remedy.NONE, f"The injected memory is within its advisory size ({warn_bytes} bytes)."
    compact = store.compact
    if compact is not None and not store.behind:
        return _current_remedy(size, plain, store, compact)
    # The mechanical compact is what `lazy memory compact` falls back to: if the never-grow
    # rule accepts it, the command succeeds whatever a model does.
    judged = _measure(store, _mechanical_trial(store))
    if judged.accepted:
        if compact is None:
            return Remedy.COMPACT, "There is no compact: run `lazy memory compact` to write one."
        return Remedy.COMPACT, (
            "The compact is behind the records: run `lazy memory compact` to fold the newer "
            "writes and removals into it."
        )
    if not _model_may_help(store):
        mechanical = f"the mechanical generator ({store.model.why_none})"
        if compact is None:
            return Remedy.CURATE, (
                "A compact would not make this section smaller: `lazy memory compact` would "
                f"use {mechanical}, whose compact {why_rejected(judged)}. {_sentence(CURATE)}"
            )
        remedy = Remedy.CLEAR if judged.clearing_helps else Remedy.CURATE
        return remedy, (
            "The compact is behind the records, but `lazy memory compact` would be rejected: it "
            f"would use {mechanical}, and a new compact {why_rejected(judged)}. Instead, "
            f"{what_helps(judged)}."
        )
    state = "There is no compact" if compact is None else "The compact is behind the records"
    found = (
        f"{state}, and a mechanical compact {why_rejected(judged)}; but {_asks_the_model(store)}."
    )
    if judged.clearing_helps:
        # What surely helps comes first; the model's try, if still wanted, after it.
        return Remedy.CLEAR, f"{found} What surely helps: {what_helps(judged)}."
    stays = "" if compact is None else " and the current compact stays"
    return Remedy.TRY_COMPACT, (
        f"{found} Run `lazy memory compact` to try it: a rejected compact writes nothing{stays}. "
        f"If it is rejected, {what_helps(judged)}."
    )


def _current_remedy(size: int, plain: int, store: _Store, compact: Compact) -> tuple[Remedy, str]:
    """The remedy when the compact covers every record as it is now."""
    if size > plain:
        return Remedy.CLEAR, (
            "The compact is current but costs more than the plain index; "
            + clear_remedy(size, plain)
            + "."
        )
    written_by = (
        "the mechanical generator"
        if compact.generator == MECHANICAL
        else generator_label(compact.generator, compact.model)
    )
    if _model_may_help(store):
        return Remedy.TRY_COMPACT, (
            f"The compact is current, but {written_by} wrote it, and {_asks_the_model(store)}. "
            "Run `lazy memory compact` to try it: it writes a compact only if launches then "
            f"inject no more than now. If they inject no less, {CURATE}."
        )
    if store.model.label is None and compact.generator != MECHANICAL:
        judged = _measure(store, _mechanical_trial(store))
        if judged.accepted and judged.candidate < judged.now:
            return Remedy.COMPACT, (
                f"The compact is current, but the mechanical compact `lazy memory compact` "
                f"would write instead ({store.model.why_none}) is smaller: run "
                "`lazy memory compact`."
            )
        return Remedy.CURATE, (
            f"The compact is current, and the mechanical compact `lazy memory compact` would "
            f"write instead ({store.model.why_none}) would not be smaller. {_sentence(CURATE)}"
        )
    if store.model.label is not None and compact.model_rejected == store.model.label:
        why = (
            f"{compact.model_rejected}'s summary of these records was rejected when it was written"
        )
    else:
        why = f"a new one would summarize the same records with what wrote it, {written_by}"
    return Remedy.CURATE, (
        f"The compact is current, so compacting again cannot help: {why}. {_sentence(CURATE)}"
    )


def _sentence(clause: str) -> str:
    return clause[0].upper() + clause[1:] + "."
