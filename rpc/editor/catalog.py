"""What one editor connection knows of the store: the live records' index lines, cached.

Hints, completions and diagnostics are asked for on every keystroke; reading the store each
time would be slow on a big one. The catalog reads the index once and is dropped whenever a
record changes (the engine's change feed tells the connection).
"""

from __future__ import annotations

from lazy_memory.engine.errors import NotFound
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.service import MemoryService


class Catalog:
    """The live records by name, and which other names were ever written, read on demand."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service
        self._entries: dict[str, IndexEntry] | None = None
        self._ever_written: dict[str, bool] = {}
        self._generation = 0

    async def entries(self) -> dict[str, IndexEntry]:
        """Every live record by name, from the cache or read now."""
        if self._entries is not None:
            return self._entries
        generation = self._generation
        entries = {entry.name: entry for entry in await self._service.index()}
        if generation == self._generation:
            self._entries = entries
        return entries

    async def named(self, query: str) -> list[IndexEntry]:
        """The live records whose names start with query, then those holding it elsewhere.

        Case is ignored, as editors filter symbols ignoring it; names sort within each group.
        """
        wanted = query.strip().casefold()
        starting, holding = [], []
        entries = await self.entries()
        for name in sorted(entries, key=lambda name: (name.casefold(), name)):
            entry, folded = entries[name], name.casefold()
            if folded.startswith(wanted):
                starting.append(entry)
            elif wanted in folded:
                holding.append(entry)
        return starting + holding

    async def ever_written(self, name: str) -> bool:
        """Whether the store holds any history for name (a removed record has some)."""
        if name in self._ever_written:
            return self._ever_written[name]
        generation = self._generation
        try:
            written = bool(await self._service.history(name))
        except NotFound:
            written = False
        if generation == self._generation:
            self._ever_written[name] = written
        return written

    def forget(self) -> None:
        """Drop what was read, and what is being read now: a record changed."""
        self._generation += 1
        self._entries = None
        self._ever_written.clear()
