"""MemoryService: the use cases of the store, each one async method, behind the write gate.

Each use case's logic sits with what it works on: saving in engine/saving.py, the launch
context as read from the store in engine/launching.py, compaction in engine/compacting.py, the
harness import in engine/importing.py, doctor in engine/doctor.py, moving a store in
engine/moving.py. MemoryService holds the collaborators, and the gate: a session that is an
agent reads freely and writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

from lazy_memory.engine import compacting, launching, saving
from lazy_memory.engine.compacting import CompactPlan, CompactStatus
from lazy_memory.engine.compaction import CompactOutcome, Mode, model_plan
from lazy_memory.engine.constants import (
    DEFAULT_SEARCH_LIMIT,
    DEFAULT_WARN_BYTES,
    MAX_BODY_BYTES,
    MAX_SEARCH_LIMIT,
    TOOL_RESULT_LIMIT_CHARS,
)
from lazy_memory.engine.context import LaunchContext, Role, unavailable_context
from lazy_memory.engine.doctor import Diagnosis, diagnose
from lazy_memory.engine.errors import (
    InvalidQuery,
    LazyMemoryError,
    NotFound,
    PermissionDenied,
    UnreadableRecords,
)
from lazy_memory.engine.identity import Identity, agent_name
from lazy_memory.engine.importing import (
    HarnessReader,
    ImportResult,
    ProgressCallback,
    import_memory,
    import_plan,
)
from lazy_memory.engine.index import IndexEntry, IndexUnavailable, UnreadableRecord
from lazy_memory.engine.moving import MoveReport, move_store
from lazy_memory.engine.names import by_any_spelling, held_spelling, storable
from lazy_memory.engine.ports import (
    Clock,
    FoldT,
    IndexBatches,
    Storage,
    Summarizer,
    fold_index,
    read_partly,
)
from lazy_memory.engine.records import HistoryEntry, Record
from lazy_memory.engine.saving import SavedRecord
from lazy_memory.engine.search_model import SearchHit
from lazy_memory.engine.search_parser import parse_query
from lazy_memory.engine.wording import counted

logger = logging.getLogger(__name__)


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
        page_limit_chars: int = TOOL_RESULT_LIMIT_CHARS,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.storage = storage
        self.identity = identity
        self.clock = clock
        self.warn_bytes = warn_bytes
        self.summarizer = summarizer
        self.harness = harness
        self.hook_limit_chars = hook_limit_chars
        """What the harness shows of a hook's output whole, for doctor to measure against."""
        self.page_limit_chars = page_limit_chars
        """The largest tool result, at which lazy_memory_recall() pages the launch context:
        what one fitted to a limit names as the calls that read it all."""
        self.max_body_bytes = max_body_bytes
        """The largest body an authoring path saves, in UTF-8 bytes; imports keep any size."""
        self._contexts = launching.LaunchContexts()

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        return await self.storage.list_records()

    async def index(self) -> list[IndexEntry]:
        """Every live record's index entry (no body), ordered by name."""
        return await self.storage.list_index()

    async def fold_index(self, fold: Callable[[IndexBatches], FoldT]) -> FoldT:
        """fold's answer on the index, handed over in batches (ports.IndexFolding): for a
        reader that turns each entry into something else, and never needs them all at once."""
        return await fold_index(self.storage, fold)

    async def readable_index(
        self, fold: Callable[[IndexBatches], FoldT]
    ) -> tuple[FoldT, list[UnreadableRecord]] | IndexUnavailable:
        """fold's answer on the index and the records the store holds but could not read (left
        out of it); or, when the store cannot be read at all, the marker a launch gets and why
        (logged): for a client's index view, which must never show an unreadable store as an
        empty one, nor hide what it can read because of one record it cannot."""
        try:
            return await read_partly(self.fold_index(fold))
        except LazyMemoryError as error:
            logger.error("memory index unavailable: %s", error)
            # The launch context's own marker, so every way in says it in the same words.
            marker = unavailable_context(Role.AGENT, str(error), self.warn_bytes)
            return IndexUnavailable(marker.text, marker.error or "")

    async def recall(self, name: str) -> Record:
        """One live record in full, found by any spelling of its name (engine/names.py);
        NotFound says so when the name is a removed record's, and how to revive it."""
        try:
            return await by_any_spelling(name, self.storage, self.storage.recall_record)
        except NotFound as error:
            raise await saving.missing(self.storage, name, error) from None

    async def recall_if_live(self, name: str) -> Record | None:
        """recall(name), or None when no live record has that name (never written, or
        removed): for a caller to whom a missing record is no error."""
        try:
            return await by_any_spelling(name, self.storage, self.storage.recall_record)
        except NotFound:
            return None

    async def search(self, query_text: str, limit: int = DEFAULT_SEARCH_LIMIT) -> list[SearchHit]:
        """The live records query_text finds, best first, at most limit (1 to 200) of them."""
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidQuery(f"invalid limit {limit}: ask for 1 to {MAX_SEARCH_LIMIT} hits")
        return await self.storage.search(parse_query(query_text), limit)

    async def search_page(
        self, query_text: str, page: int, page_size: int
    ) -> tuple[list[SearchHit], bool]:
        """One page of what query_text finds, best first, and whether more pages follow.

        Records the store cannot read raise UnreadableRecords, its readable the page of the
        others (and whether more follow), as search's is their hits.
        """
        if page < 1 or not 1 <= page_size <= MAX_SEARCH_LIMIT:
            raise InvalidQuery(f"invalid page {page} of {counted(page_size, 'hit')}")
        skip = (page - 1) * page_size

        def paged(hits: list[SearchHit]) -> tuple[list[SearchHit], bool]:
            return hits[skip : skip + page_size], len(hits) > skip + page_size

        try:
            return paged(await self.storage.search(parse_query(query_text), skip + page_size + 1))
        except UnreadableRecords as error:
            error.readable = paged(cast(list[SearchHit], error.readable))
            raise

    async def save(
        self,
        name: str,
        *,
        type: str | None = None,
        description: str | None = None,
        body: str | None = None,
        if_revision: int | None = None,
    ) -> SavedRecord:
        """Create, update or revive a record, every authoring rule applied (engine/saving.py).

        On an update, a field left as None keeps its current value, and on a revival its
        value in the last live revision; a concurrent write is never silently overwritten
        with stale fields, and a save that changes nothing writes nothing. The answer says
        which it was (SavedRecord.outcome), from the one read the save makes.
        """
        self._require_writer()
        return await saving.save(
            self.storage,
            self.identity.actor,
            self.clock,
            name,
            type=type,
            description=description,
            body=body,
            if_revision=if_revision,
            max_body_bytes=self.max_body_bytes,
        )

    async def remove(self, name: str) -> HistoryEntry:
        """Tombstone a record: it leaves the index, its history stays.

        The record is read first: a name that is not live is NotFound (saying when it is a
        removed record's) before anything is written, so a store that does not exist yet is
        not created by a removal that removes nothing.
        """
        self._require_writer()
        record = await self.recall(name)
        try:
            return await self.storage.remove_record(
                record.name, actor=self.identity.actor, at=self.clock.now()
            )
        except NotFound as error:  # another writer removed it since it was read
            raise await saving.missing(self.storage, record.name, error) from None

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every write in order, or the writes of one name, by any spelling of it (NotFound
        if it has none)."""
        if name is None:
            return await self.storage.history()
        entries = await self.storage.history(storable(name))
        if not entries:
            spelling = await held_spelling(name, self.storage)
            entries = [] if spelling == name else await self.storage.history(spelling)
        if not entries:
            raise NotFound(f"no record named {name!r} has ever been written")
        return entries

    async def launch_context(self, role: Role, limit_chars: int | None = None) -> LaunchContext:
        """The launch context of role, for a channel that shows at most limit_chars whole
        (None: any size); never raises, never blocks the launch.

        A store that cannot be read gives the UNAVAILABLE marker (and an error in the log),
        which no model can mistake for an empty store. The whole one is rendered again only
        when the store's change marker has moved, so a write by any process shows at once;
        one with a limit is read once, uncached, and fitted if it must be (see
        engine/delivery.py): a launch hook's one question in a process of its own.
        """
        if limit_chars is None:
            return await self._contexts.whole(self.storage, role, self.warn_bytes)
        return await launching.fitted(
            self.storage, role, limit_chars, self.warn_bytes, self.page_limit_chars
        )

    async def compact_plan(self, mode: Mode) -> CompactPlan:
        """What a compaction in mode would do, to show the user before any model call."""
        return await compacting.compact_plan(self.storage, self.summarizer, mode)

    async def compact(self, mode: Mode) -> CompactOutcome:
        """Generate a compact from the records and store it, if it never grows the launch context.

        The records and their history are only read; a rejected candidate writes nothing
        (engine/compacting.py).
        """
        self._require_writer()
        # The launch context is about to change, and a big store's cached one would only add
        # to this call's peak memory.
        self._contexts.forget()
        return await compacting.compact(
            self.storage, self.summarizer, self.clock, self.identity.actor, mode
        )

    async def compact_status(self) -> CompactStatus:
        """The compact, what it covers, and what was written or removed since."""
        return await compacting.compact_status(self.storage)

    async def clear_compact(self) -> bool:
        """Empty the compact slot; True if there was a compact to clear."""
        self._require_writer()
        return await compacting.clear_compact(self.storage)

    async def doctor(self) -> Diagnosis:
        """What a launch injects, how fresh the compact is, and the remedy if one is needed.

        It also reports harness memory that has no record yet; it never writes.
        """
        state = await launching.launch_state(self.storage, partly=True)
        records, compact, removed, compact_error = state[:4]
        plan = await import_plan(self.harness, self.storage)
        return diagnose(
            records,
            compact,
            removed,
            self.warn_bytes,
            self.clock.now(),
            importable=[planned.content.name for planned in plan.records],
            compact_error=compact_error,
            named_at_launch=state.unreadable,
            unreadable=await self.storage.unreadable_records(),
            hook_limit_chars=self.hook_limit_chars,
            model=model_plan(self.summarizer),
            page_limit_chars=self.page_limit_chars,
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
        return await import_memory(
            self.harness,
            self.storage,
            self.clock,
            max_body_bytes=self.max_body_bytes,
            apply=apply,
            progress=progress,
        )

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

    def _require_writer(self) -> None:
        if self.identity.is_agent:
            raise PermissionDenied(
                f"this session is {agent_name(self.identity.task_id or '')} and agents are "
                "read-only: put memory-worthy knowledge in your final summary instead"
            )
