"""MemoryService: the use cases of the store, each one async method, behind the write gate."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple

from pydantic import BaseModel

from lazy_memory.engine import compaction
from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import CompactOutcome, Mode, measure
from lazy_memory.engine.context import (
    OVER_THRESHOLD_LOG,
    LaunchContext,
    Role,
    assembled_size,
    launch_context,
    reframed,
    unavailable_context,
    written_since,
)
from lazy_memory.engine.delivery import Delivery, deliver
from lazy_memory.engine.doctor import Diagnosis, diagnose
from lazy_memory.engine.errors import (
    CompactRejected,
    Conflict,
    InvalidQuery,
    InvalidRecord,
    LazyMemoryError,
    LLMUnavailable,
    NotFound,
    PermissionDenied,
    StorageUnavailable,
)
from lazy_memory.engine.identity import Identity, agent_name
from lazy_memory.engine.importing import HarnessReader, ImportPlan, plan_import
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.moving import MoveReport, move_store
from lazy_memory.engine.names import check_writable_name
from lazy_memory.engine.ports import Clock, Storage, Summarizer
from lazy_memory.engine.records import (
    MAX_BODY_BYTES,
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Record,
    RecordContent,
    authored_content,
    is_unicode,
)
from lazy_memory.engine.saving import (
    SavedRecord,
    removed_conflict,
    same_content,
    saved,
    tombstone,
)
from lazy_memory.engine.search import DEFAULT_LIMIT, MAX_LIMIT, SearchHit, parse_query

_MERGE_ATTEMPTS = 5
DEFAULT_WARN_BYTES = 4096
logger = logging.getLogger(__name__)


class CompactPlan(BaseModel):
    """What `lazy memory compact` is about to do, shown before any model call."""

    mode: Mode
    record_count: int
    last_generated_at: datetime | None
    generator: str
    model: str | None


class ImportResult(BaseModel):
    """An import's plan, and the names it wrote (none for a preview)."""

    plan: ImportPlan
    applied: bool
    imported: list[str] = []
    max_body_bytes: int = MAX_BODY_BYTES
    large_bodies: list[str] = []
    """Records whose body is over max_body_bytes: imported verbatim all the same."""


ProgressCallback = Callable[[int, int], None]
"""Told (done, total) as a long operation advances."""

IMPORT_ACTOR = Actor(kind=ActorKind.SYSTEM, detail="harness-import")


class CompactStatus(BaseModel):
    """The compact slot as `--show` reports it, against the records as they are now."""

    compact: Compact | None
    covered: int
    bytes_with: int
    bytes_without: int
    written_since: list[Record]
    removed_since: list[str]


class _InjectedState(NamedTuple):
    """What a launch's section is assembled from, read from the store in one go."""

    records: list[IndexEntry]
    compact: Compact | None
    removed: list[str]
    compact_error: str | None
    """Why the compact slot could not be read; the section is then the plain index."""


class MemoryService:
    """The memory store as its clients see it: read freely, write only as a non-agent."""

    def __init__(
        self,
        storage: Storage,
        identity: Identity,
        clock: Clock,
        *,
        warn_bytes: int = DEFAULT_WARN_BYTES,
        summarizer: Summarizer | None = None,
        harness: HarnessReader | None = None,
        hook_limit_chars: int | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.storage = storage
        self.identity = identity
        self.clock = clock
        self.warn_bytes = warn_bytes
        self.summarizer = summarizer
        self.harness = harness
        self.hook_limit_chars = hook_limit_chars
        self.max_body_bytes = max_body_bytes
        """The largest body an authoring path saves, in UTF-8 bytes; imports keep any size."""
        """What the harness shows of a hook's output whole, for doctor to measure against."""
        # The last launch contexts (by role) and the store's change marker they were read under.
        self._contexts: tuple[str, dict[Role, LaunchContext]] | None = None

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        return await self.storage.list_records()

    async def index(self) -> list[IndexEntry]:
        """Every live record's index entry (no body), ordered by name."""
        return await self.storage.list_index()

    async def recall(self, name: str) -> Record:
        """One live record in full."""
        return await self.storage.get_record(_storable(name))

    async def find(self, name: str) -> Record | None:
        """One live record in full, or None when there is none by that name."""
        try:
            return await self.recall(name)
        except NotFound:
            return None

    async def search(self, query_text: str, limit: int = DEFAULT_LIMIT) -> list[SearchHit]:
        """The live records query_text finds, best first, at most limit (1 to 200) of them."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidQuery(f"invalid limit {limit}: ask for 1 to {MAX_LIMIT} hits")
        return await self.storage.search(parse_query(query_text), limit)

    async def search_page(
        self, query_text: str, page: int, page_size: int
    ) -> tuple[list[SearchHit], bool]:
        """One page of what query_text finds, best first, and whether more pages follow."""
        if page < 1 or not 1 <= page_size <= MAX_LIMIT:
            raise InvalidQuery(f"invalid page {page} of {page_size} hits")
        skip = (page - 1) * page_size
        hits = await self.storage.search(parse_query(query_text), skip + page_size + 1)
        return hits[skip : skip + page_size], len(hits) > skip + page_size

    async def save(
        self,
        name: str,
        *,
        type: str | None = None,
        description: str | None = None,
        body: str | None = None,
        if_revision: int | None = None,
    ) -> SavedRecord:
        """Create, update or revive a record, every authoring rule applied.

        On an update, a field left as None keeps its current value, and on a revival its
        value in the last live revision; the merge is itself a compare-and-swap on the
        revision it read, retried if another writer got in between, so a concurrent write is
        never silently overwritten with stale fields. A save that changes nothing writes
        nothing (engine/saving.py). A name the store held before the name rule stays
        writable by its exact name (engine/names.py), and an imported record keeps its
        provenance through later edits.
        """
        self._require_writer()
        held = await check_writable_name(name, self.storage)
        if type is not None and description is not None and body is not None:
            content = authored_content(
                name, type, description, body, held_name=held, max_body_bytes=self.max_body_bytes
            )
            current = await self.find(name)
            base = current or await self._removal(name)
            return await self._save_content(
                _with_provenance(content, base), current, if_revision, if_revision
            )
        for _ in range(_MERGE_ATTEMPTS):
            current = await self.find(name)
            base = current or await self._removal(name)
            if base is None:
                if type is None or description is None:
                    raise InvalidRecord(
                        f"{name!r} is a new record: give it a type and a description"
                    )
                content = authored_content(
                    name,
                    type,
                    description,
                    body or "",
                    held_name=held,
                    max_body_bytes=self.max_body_bytes,
                )
                expected = if_revision
            else:
                content = authored_content(
                    name,
                    type if type is not None else base.type,
                    description if description is not None else base.description,
                    body if body is not None else base.body,
                    held_name=held,
                    # A body kept as it is was not written now: an import may have set it.
                    max_body_bytes=None if body is None else self.max_body_bytes,
                )
                content = _with_provenance(content, base)
                expected = if_revision if if_revision is not None else base.revision
            try:
                return await self._save_content(content, current, expected, if_revision)
            except Conflict:
                if if_revision is not None:
                    raise
        raise Conflict(f"{name!r} kept changing while it was being updated; try again")

    async def remove(self, name: str) -> HistoryEntry:
        """Tombstone a record: it leaves the index, its history stays."""
        self._require_writer()
        return await self.storage.remove_record(
            _storable(name), actor=self.identity.actor, at=self.clock.now()
        )

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every write in order, or the writes of one name (NotFound if it has none)."""
        entries = await self.storage.history(None if name is None else _storable(name))
        if name is not None and not entries:
            raise NotFound(f"no record named {name!r} has ever been written")
        return entries

    async def context(self, role: Role) -> LaunchContext:
        """The memory section for a launch of role; never raises, never blocks the launch.

        A store that cannot be read gives the UNAVAILABLE marker (and an error in the log),
        which no model can mistake for an empty store. The section is assembled again only
        when the store's change marker has moved, so a write by any process shows at once.
        """
        try:
            context = await self._launch_context(role)
        except LazyMemoryError as error:
            logger.error("memory context unavailable: %s", error)
            return unavailable_context(role, str(error), self.warn_bytes)
        _warn_if_over(context)
        return context

    async def delivery(self, role: Role, limit_chars: int | None) -> Delivery:
        """The section for a channel that shows at most limit_chars whole; never raises.

        The same section as context(role) when it fits; else the fitted one (see
        engine/delivery.py). The store is read once, uncached: this is a launch hook's one
        question in a process of its own.
        """
        try:
            state = await self._injected_state()
        except LazyMemoryError as error:
            logger.error("memory context unavailable: %s", error)
            return deliver(unavailable_context(role, str(error), self.warn_bytes), [], limit_chars)
        context = launch_context(role, *state[:3], self.warn_bytes)
        _warn_if_over(context)
        return deliver(context, state.records, limit_chars)

    async def compact_plan(self, mode: Mode) -> CompactPlan:
        """What a compaction in mode would do, to show the user before any model call."""
        records = await self.storage.list_index()
        if not records:
            raise CompactRejected("there are no records to compact")
        current = await self.storage.get_compact()
        if mode is Mode.MECHANICAL or self.summarizer is None:
            generator, model = compaction.MECHANICAL, None
        else:
            generator, model = self.summarizer.name, self.summarizer.model
        return CompactPlan(
            mode=mode,
            record_count=len(records),
            last_generated_at=None if current is None else current.generated_at,
            generator=generator,
            model=model,
        )

    async def compact(self, mode: Mode) -> CompactOutcome:
        """Generate a compact from the records and store it, if it never grows the section.

        The records and their history are only read. A candidate must shrink the plain index
        and be no bigger than what launches inject now (compaction.measure). auto falls back
        to the mechanical generator on any model failure or rejected summary; llm fails
        loudly instead. A rejected candidate writes nothing.
        """
        self._require_writer()
        # The section is about to change, and a big store's cached one would only add to
        # this call's peak memory.
        self._contexts = None
        records, current, removed, _ = await self._injected_state()
        if not records:
            raise CompactRejected("there are no records to compact")
        fallback_reason: str | None = None
        omitted: list[IndexEntry] = []
        candidate: Compact | None = None
        if mode is not Mode.MECHANICAL:
            try:
                candidate, omitted = await self._llm_candidate(records)
            except LLMUnavailable as error:
                if mode is Mode.LLM:
                    raise
                fallback_reason = error.message
        judged = None if candidate is None else measure(records, candidate, current, removed)
        if judged is not None and not judged.accepted and mode is Mode.AUTO:
            fallback_reason = f"the model's summary {compaction.why_rejected(judged)}"
            candidate, omitted, judged = None, [], None
        if candidate is None or judged is None:
            candidate = self._new_compact(
                records, compaction.mechanical_summary(records), compaction.MECHANICAL, None
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
        await self.storage.put_compact(candidate)
        return CompactOutcome(
            compact=candidate,
            record_count=record_count,
            bytes_without=judged.without,
            bytes_with=judged.candidate,
            fallback_reason=fallback_reason,
            omitted=[record.name for record in omitted],
        )

    async def compact_status(self) -> CompactStatus:
        """The compact, what it covers, and what was written or removed since."""
        records, compact, removed, _ = await self._injected_state()
        newer = [] if compact is None else written_since(records, compact)
        return CompactStatus(
            compact=compact,
            covered=0 if compact is None else len(compact.watermark),
            bytes_with=assembled_size(records, compact, removed),
            bytes_without=assembled_size(records, None, []),
            written_since=await self._records_named([record.name for record in newer]),
            removed_since=removed,
        )

    async def clear_compact(self) -> bool:
        """Empty the compact slot; True if there was a compact to clear."""
        self._require_writer()
        try:
            existed = await self.storage.get_compact() is not None
        except StorageUnavailable:
            existed = True  # an unreadable compact is still one to clear
        await self.storage.clear_compact()
        return existed

    async def doctor(self) -> Diagnosis:
        """What a launch injects, how fresh the compact is, and the remedy if one is needed.

        It also reports harness memory that has no record yet; it never writes.
        """
        records, compact, removed, compact_error = await self._injected_state()
        importable = [planned.content.name for planned in (await self._import_plan()).records]
        return diagnose(
            records,
            compact,
            removed,
            self.warn_bytes,
            self.clock.now(),
            importable=importable,
            compact_error=compact_error,
            hook_limit_chars=self.hook_limit_chars,
        )

    async def import_memory(
        self, *, apply: bool, progress: ProgressCallback | None = None
    ) -> ImportResult:
        """Preview, or apply, the import of the harness's memory files as system records.

        A name the store has ever held (a removed one included) is left alone, and each
        write is a create-only compare-and-swap, so a re-run or a concurrent save never
        clobbers what a person wrote.
        """
        self._require_writer()
        plan = await self._import_plan()
        limit = self.max_body_bytes
        # Imports keep bodies verbatim whatever their size. Those over the authoring limit are
        # reported: a later save that rewrites such a body must bring it under the limit.
        large = [p.content.name for p in plan.records if len(p.content.body.encode()) > limit]
        result = ImportResult(plan=plan, applied=False, max_body_bytes=limit, large_bodies=large)
        if not apply:
            return result
        imported = []
        for done, planned in enumerate(plan.records, start=1):
            try:
                await self.storage.save_record(
                    planned.content,
                    actor=IMPORT_ACTOR,
                    at=self.clock.now(),
                    operation=Operation.IMPORT,
                    if_revision=0,
                )
            except Conflict:
                plan.already_present.append(planned.content.name)
            else:
                imported.append(planned.content.name)
            if progress is not None:
                progress(done, len(plan.records))
        return result.model_copy(update={"applied": True, "imported": imported})

    async def move_to(
        self, target: Storage, *, dry_run: bool = False, progress: ProgressCallback | None = None
    ) -> MoveReport:
        """Copy the whole store (history, tombstones, compact) into target, or resume a copy.

        Entries keep their original actors; only a session that may write may move a store.
        """
        self._require_writer()
        return await move_store(self.storage, target, dry_run=dry_run, progress=progress)

    async def aclose(self) -> None:
        """Release the storage."""
        await self.storage.aclose()

    async def _import_plan(self) -> ImportPlan:
        if self.harness is None:
            return ImportPlan()
        scan = await self.harness.scan()
        ever_written = {entry.name for entry in await self.storage.history()}
        return plan_import(scan, ever_written)

    async def _launch_context(self, role: Role) -> LaunchContext:
        """The context as the store holds it now, assembled again only if it was written.

        The marker is read before the state it guards: a write landing in between leaves a
        newer context under an older marker, which the next call reads again.
        """
        marker = await self.storage.change_marker()
        if self._contexts is not None and self._contexts[0] == marker:
            contexts = self._contexts[1]
            if role not in contexts:
                contexts[role] = reframed(next(iter(contexts.values())), role)
            return contexts[role]
        # Let go of the old section before assembling the new one: at 100,000 records each
        # is megabytes.
        self._contexts = None
        context = launch_context(role, *(await self._injected_state())[:3], self.warn_bytes)
        self._contexts = (marker, {role: context})
        return context

    async def _injected_state(self) -> _InjectedState:
        records = await self.storage.list_index()
        try:
            compact = await self.storage.get_compact()
        except StorageUnavailable as error:
            # A bad compact must not blind a launch: the plain index says everything it did.
            logger.error(
                "the compact cannot be read, so launches get the plain index "
                "(`lazy memory compact --clear` removes it): %s",
                error,
            )
            return _InjectedState(records, None, [], error.message)
        removed = [] if compact is None else await self.storage.removed_since(compact.watermark)
        return _InjectedState(records, compact, removed, None)

    async def _records_named(self, names: list[str]) -> list[Record]:
        """The live records of these names in full, leaving out any removed meanwhile."""
        found = [await self.find(name) for name in names]
        return [record for record in found if record is not None]

    async def _llm_candidate(self, records: list[IndexEntry]) -> tuple[Compact, list[IndexEntry]]:
        if self.summarizer is None:
            raise LLMUnavailable("no summarizer is configured")
        answer = await self.summarizer.summarize(compaction.summary_prompt(records))
        if not answer.strip():
            raise LLMUnavailable("the model returned an empty answer")
        summary, omitted = compaction.repaired(answer, records)
        compact = self._new_compact(records, summary, self.summarizer.name, self.summarizer.model)
        return compact, omitted

    def _new_compact(
        self, records: list[IndexEntry], summary: str, generator: str, model: str | None
    ) -> Compact:
        return compaction.new_compact(
            records,
            summary,
            generator=generator,
            model=model,
            generated_at=self.clock.now(),
            generated_by=self.identity.actor,
        )

    async def _removal(self, name: str) -> HistoryEntry | None:
        """The tombstone of a removed name, holding its last live revision; else None."""
        return tombstone(await self.storage.history(name))

    async def _save_content(
        self,
        content: RecordContent,
        current: Record | None,
        expected: int | None,
        if_revision: int | None,
    ) -> SavedRecord:
        """Write content unless the live record already holds it; if_revision is the caller's
        own, to say why it cannot match a removed record."""
        matches = current is not None and expected in (None, current.revision)
        if current is not None and matches and same_content(content, current):
            return saved(current, unchanged=True)
        try:
            return saved(await self._write(content, expected))
        except Conflict:
            removal = None if if_revision is None else await self._removal(content.name)
            if removal is not None and if_revision is not None:
                raise removed_conflict(removal, if_revision) from None
            raise

    async def _write(self, content: RecordContent, if_revision: int | None) -> Record:
        return await self.storage.save_record(
            content, actor=self.identity.actor, at=self.clock.now(), if_revision=if_revision
        )

    def _require_writer(self) -> None:
        if self.identity.is_agent:
            raise PermissionDenied(
                f"this session is {agent_name(self.identity.task_id or '')} and agents are "
                "read-only: put memory-worthy knowledge in your final summary instead"
            )


def _warn_if_over(context: LaunchContext) -> None:
    """Log the advisory size line each time a section over it is assembled (every launch)."""
    if context.over_threshold:
        logger.warning(OVER_THRESHOLD_LOG)


def _with_provenance(content: RecordContent, current: RecordContent | None) -> RecordContent:
    """content carrying the provenance of the record it follows (live, or removed): where an
    imported record came from."""
    if current is None or current.provenance is None:
        return content
    return content.model_copy(update={"provenance": current.provenance})


def _storable(name: str) -> str:
    """A name to look up; one no store could hold (not Unicode text) names no record."""
    if not is_unicode(name):
        raise NotFound(f"no record named {name!r}: the name is not Unicode text")
    return name
