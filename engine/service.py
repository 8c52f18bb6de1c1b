"""MemoryService: the use cases of the store, each one async method, behind the write gate."""

from __future__ import annotations

from lazy_memory.engine.context import Role, render_context
from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound, PermissionDenied
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import Clock, Storage
from lazy_memory.engine.records import HistoryEntry, Record, RecordContent, authored_content

_MERGE_ATTEMPTS = 5


class MemoryService:
    """The memory store as its clients see it: read freely, write only as a non-agent."""

    def __init__(self, storage: Storage, identity: Identity, clock: Clock) -> None:
        self.storage = storage
        self.identity = identity
        self.clock = clock

    async def list_records(self) -> list[Record]:
        """Every live record, ordered by name."""
        return await self.storage.list_records()

    async def recall(self, name: str) -> Record:
        """One live record in full."""
        return await self.storage.get_record(name)

    async def find(self, name: str) -> Record | None:
        """One live record in full, or None when there is none by that name."""
        try:
            return await self.storage.get_record(name)
        except NotFound:
            return None

    async def save(
        self,
        name: str,
        *,
        type: str | None = None,
        description: str | None = None,
        body: str | None = None,
        if_revision: int | None = None,
    ) -> Record:
        """Create, update or revive a record, every authoring rule applied.

        On an update, a field left as None keeps its current value; the merge is itself a
        compare-and-swap on the revision it read, retried if another writer got in between,
        so a concurrent write is never silently overwritten with stale fields.
        """
        self._require_writer()
        if type is not None and description is not None and body is not None:
            content = authored_content(name, type, description, body)
            return await self._write(content, if_revision)
        for _ in range(_MERGE_ATTEMPTS):
            current = await self.find(name)
            if current is None:
                if type is None or description is None:
                    raise InvalidRecord(
                        f"{name!r} is a new record: give it a type and a description"
                    )
                content = authored_content(name, type, description, body or "")
                expected = if_revision
            else:
                content = authored_content(
                    name,
                    type if type is not None else current.type,
                    description if description is not None else current.description,
                    body if body is not None else current.body,
                )
                expected = if_revision if if_revision is not None else current.revision
            try:
                return await self._write(content, expected)
            except Conflict:
                if if_revision is not None:
                    raise
        raise Conflict(f"{name!r} kept changing while it was being updated; try again")

    async def remove(self, name: str) -> HistoryEntry:
        """Tombstone a record: it leaves the index, its history stays."""
        self._require_writer()
        return await self.storage.remove_record(
            name, actor=self.identity.actor, at=self.clock.now()
        )

    async def history(self, name: str | None = None) -> list[HistoryEntry]:
        """Every write in order, or the writes of one name (NotFound if it has none)."""
        entries = await self.storage.history(name)
        if name is not None and not entries:
            raise NotFound(f"no record named {name!r} has ever been written")
        return entries

    async def context(self, role: Role) -> str:
        """The memory section for a launch of role: the index of every live record."""
        return render_context(await self.storage.list_records(), role)

    async def aclose(self) -> None:
        """Release the storage."""
        await self.storage.aclose()

    async def _write(self, content: RecordContent, if_revision: int | None) -> Record:
        return await self.storage.save_record(
            content, actor=self.identity.actor, at=self.clock.now(), if_revision=if_revision
        )

    def _require_writer(self) -> None:
        if self.identity.is_agent:
            raise PermissionDenied(
                f"this session is agent task {self.identity.task_id!r} and agents are "
                "read-only: put memory-worthy knowledge in your final summary instead"
            )
