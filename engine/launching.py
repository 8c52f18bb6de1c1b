"""Launch contexts read from the store: the state one is rendered from, read in one go, the
whole ones cached under the store's change marker, and one fitted to a channel's limit.

A store that cannot be read gives the UNAVAILABLE marker (and an error in the log), which no
model can mistake for an empty store; a compact that cannot be read gives the plain index;
records the store holds but cannot read are named in one line below the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.context import (
    LaunchContext,
    Role,
    finished,
    launch_context,
    opened,
    reframed,
    unavailable_context,
    warnings_of,
)
from lazy_memory.engine.delivery import fit
from lazy_memory.engine.errors import LazyMemoryError, StorageUnavailable
from lazy_memory.engine.index import IndexEntry, UnreadableRecord
from lazy_memory.engine.ports import fold_index, read_partly

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Storage

# The logger these lines were always written under (they were MemoryService's), kept so a log
# filter or reader that names it still sees them.
logger = logging.getLogger("lazy_memory.engine.service")


class LaunchState(NamedTuple):
    """What a launch context is rendered from, read from the store in one go (the launch
    hook reads the same without the engine: adapters/launch/state.py)."""

    records: list[IndexEntry]
    compact: Compact | None
    removed: list[str]
    compact_error: str | None
    """Why the compact slot could not be read; the launch context is then the plain index."""
    unreadable: Sequence[UnreadableRecord] = ()
    """The live records the store holds but could not read (only when read partly)."""


async def launch_state(storage: Storage, *, partly: bool = False) -> LaunchState:
    """The live index, the compact and what was removed since it, as launches inject them.

    partly: records the store cannot read are left out and named in unreadable, as a launch
    shows them; otherwise they fail the read (UnreadableRecords), as they must fail a compact.
    """
    if partly:
        records, unreadable = await read_partly(storage.list_index())
    else:
        records, unreadable = await storage.list_index(), []
    return LaunchState(records, *(await _compact_state(storage)), unreadable)


async def _compact_state(storage: Storage) -> tuple[Compact | None, list[str], str | None]:
    """The compact, what was removed since it, and why it could not be read, if it could not."""
    try:
        compact = await storage.get_compact()
    except StorageUnavailable as error:
        # A bad compact must not blind a launch: the plain index says everything it did.
        logger.error(
            "the compact cannot be read, so launches get the plain index "
            "(`lazy memory compact --clear` removes it): %s",
            error,
        )
        return None, [], error.message
    removed = [] if compact is None else await storage.removed_since(compact.watermark)
    return compact, removed, None


class LaunchContexts:
    """The last whole launch contexts (by role) and the store's change marker they were read
    under."""

    def __init__(self) -> None:
        self._cached: tuple[str, dict[Role, LaunchContext]] | None = None

    def forget(self) -> None:
        """Let go of the cached launch contexts; the next whole() renders its own again."""
        self._cached = None

    async def whole(self, storage: Storage, role: Role, warn_bytes: int) -> LaunchContext:
        """The launch context of role, whole; never raises, never blocks the launch.

        It is rendered again only when the store's change marker has moved, so a write by
        any process shows at once.
        """
        try:
            context = await self._current(storage, role, warn_bytes)
        except LazyMemoryError as error:
            logger.error("memory context unavailable: %s", error)
            return unavailable_context(role, str(error), warn_bytes)
        _warn_if_over(context)
        return context

    async def _current(self, storage: Storage, role: Role, warn_bytes: int) -> LaunchContext:
        """The launch context as the store holds it now, rendered again only if it was written.

        The marker is read before the state it guards: a write landing in between leaves a
        newer launch context under an older marker, which the next call reads again.
        """
        marker = await storage.change_marker()
        if self._cached is not None and self._cached[0] == marker:
            contexts = self._cached[1]
            if role not in contexts:
                contexts[role] = reframed(next(iter(contexts.values())), role)
            return contexts[role]
        # Let go of the old text before rendering the new one: at 100,000 records each is
        # megabytes.
        self._cached = None
        compact, removed, _ = await _compact_state(storage)
        # Assembled as the store hands the index over, a batch at a time: the entries are
        # never held all at once beside the text (ports.IndexFolding).
        lines, unreadable = await read_partly(
            fold_index(storage, lambda batches: opened(role, batches, compact, removed))
        )
        context = finished(role, lines, unreadable, warn_bytes)
        self._cached = (marker, {role: context})
        return context


async def fitted(
    storage: Storage, role: Role, limit_chars: int, warn_bytes: int, page_limit: int
) -> LaunchContext:
    """The launch context of role for a channel that shows at most limit_chars whole; never
    raises.

    The whole one when it fits; else the fitted one (see engine/delivery.py), whose last line
    names lazy_memory_recall's pages of page_limit characters. The store is read once,
    uncached: this is a launch hook's one question in a process of its own.
    """
    try:
        state = await launch_state(storage, partly=True)
    except LazyMemoryError as error:
        logger.error("memory context unavailable: %s", error)
        context = unavailable_context(role, str(error), warn_bytes)
        return fit(context, [], limit_chars, page_limit=page_limit)
    context = launch_context(role, *state[:3], warn_bytes, state.unreadable)
    _warn_if_over(context)
    return fit(
        context, state.records, limit_chars, page_limit=page_limit, unreadable=state.unreadable
    )


def _warn_if_over(context: LaunchContext) -> None:
    """Log the advisory size line each time a launch context over it is rendered (every
    launch)."""
    for line in warnings_of(context):
        logger.warning(line)
