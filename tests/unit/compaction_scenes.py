"""The compaction tests' stand-ins: a scripted model, a service on a real store, a store
filled with realistic records, and a good summary of them."""

from __future__ import annotations

from collections.abc import Callable

from bench.corpus import realistic_records
from lazy_memory.adapters.files.storage import FileStorage
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.ports import Summarizer
from lazy_memory.engine.records import Record
from lazy_memory.engine.service import MemoryService
from tests.support.actors import BUILDER_SESSION
from tests.support.clocks import TickingClock


class ScriptedSummarizer:
    """A stand-in model: answers each prompt with a function of it, or fails."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, answer: Callable[[str], str] | Exception) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    async def summarize(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer(prompt)

    def known_failure(self) -> None:
        """Nothing is known before a call: a scripted failure happens at the call."""
        return None


def service(
    storage: SqliteStorage | FileStorage,
    summarizer: Summarizer | None = None,
    warn_bytes: int = 4096,
) -> MemoryService:
    return MemoryService(
        storage, BUILDER_SESSION, TickingClock(), warn_bytes=warn_bytes, summarizer=summarizer
    )


async def fill(memory: MemoryService, count: int) -> list[Record]:
    return [
        await memory.save(r.name, type=r.type, description=r.description, body=r.body)
        for r in realistic_records(count, seed=4)
    ]


def prompted_names(prompt: str) -> list[str]:
    """The record names in a summary prompt's index."""
    index = prompt.split("The index (", 1)[1]
    return [line[2:].split(" (")[0] for line in index.splitlines() if line.startswith("- ")]


def merged_themes(prompt: str) -> str:
    """A good summary: every name, grouped, without the descriptions."""
    return "Themes: " + ", ".join(prompted_names(prompt))
