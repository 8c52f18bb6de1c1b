"""The states of the store doctor can find (tests/unit/test_doctor_remedies.py walks each one,
test_doctor_predictions.py again with a model), the remedies doctor gives in each when no
model is configured, and the commands its advice names for them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.doctor import Remedy
from lazy_memory.engine.service import MemoryService
from tests.unit.compaction_scenes import ScriptedSummarizer, fill, merged_themes, service

OVER = 100
"""A warning threshold every state is over."""


def a_model(storage: SqliteStorage) -> MemoryService:
    """A service whose model writes a short summary naming every record."""
    return service(storage, ScriptedSummarizer(merged_themes))


# The states of the store doctor can find, each built as a user would get there.


async def no_compact_shrinkable(storage: SqliteStorage) -> None:
    await fill(service(storage), 60)


async def no_compact_not_shrinkable(storage: SqliteStorage) -> None:
    await fill(service(storage), 1)


async def current(storage: SqliteStorage) -> None:
    memory = service(storage)
    await fill(memory, 60)
    await memory.compact(Mode.MECHANICAL)


async def behind_shrinkable(storage: SqliteStorage) -> None:
    memory = service(storage)
    records = await fill(memory, 60)
    await memory.compact(Mode.MECHANICAL)
    await memory.remove(records[0].name)


async def behind_costing_more_than_the_plain_index(storage: SqliteStorage) -> None:
    # A model compact of one record, then that record rewritten: the summary plus the
    # record's catch-up line cost more than the plain index, and no compact of one record
    # is smaller than the plain index.
    memory = a_model(storage)
    (record,) = await fill(memory, 1)
    await memory.compact(Mode.LLM)
    await memory.save(record.name, description="Rewritten after the compact")


async def behind_cheaper_than_a_recompact(storage: SqliteStorage) -> None:
    # The case: a small model compact, a record saved since, and no model now.
    memory = a_model(storage)
    await fill(memory, 30)
    await memory.compact(Mode.LLM)
    await memory.save("saved-later", type="project", description="Written after it", body="")


State = Callable[[SqliteStorage], Awaitable[None]]
STATES: list[tuple[State, list[Remedy]]] = [
    (no_compact_shrinkable, [Remedy.COMPACT, Remedy.CURATE]),
    (no_compact_not_shrinkable, [Remedy.CURATE]),
    (current, [Remedy.CURATE]),
    (behind_shrinkable, [Remedy.COMPACT, Remedy.CURATE]),
    (behind_costing_more_than_the_plain_index, [Remedy.CLEAR, Remedy.CURATE]),
    (behind_cheaper_than_a_recompact, [Remedy.CURATE]),
]

# What doctor's advice must name for each remedy.
COMMANDS = {
    Remedy.COMPACT: "run `lazy memory compact`",
    Remedy.CLEAR: "run `lazy memory compact --clear`",
    Remedy.CURATE: "raise [memory] warn_bytes",
}
