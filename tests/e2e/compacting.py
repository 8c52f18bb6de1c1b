"""What the tests of `lazy memory compact` and `lazy doctor` share: a project's store filled
with realistic records, and the fake model's answers read from the summary prompt it is sent."""

from __future__ import annotations

from pathlib import Path

from bench.corpus import fill_store
from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.records import Record
from tests.support.fake_anthropic import Received


async def fill(project: Path, data_dir: Path, count: int) -> list[Record]:
    """Save count realistic records straight into the project's store."""
    storage = await open_storage(Settings(root=project, data_dir=data_dir))
    try:
        await fill_store(storage, count, seed=7)
        return await storage.list_records()
    finally:
        await storage.aclose()


def names_in(request: Received) -> list[str]:
    index = request.prompt.split("The index (", 1)[1]
    return [line[2:].split(" (")[0] for line in index.splitlines() if line.startswith("- ")]


def themes(request: Received) -> str:
    """A model's short summary that names every record."""
    return "Themes: " + ", ".join(names_in(request))
