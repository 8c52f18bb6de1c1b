"""The conformance suite's fixtures: every test runs once per storage backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.ports import Storage
from tests.support.stores import OpenStorage


@pytest.fixture
async def open_store(settings: Settings) -> AsyncIterator[OpenStorage]:
    """Open another handle on the same store (closed at the end of the test)."""
    opened: list[Storage] = []

    async def opener() -> Storage:
        storage = await open_storage(settings)
        opened.append(storage)
        return storage

    yield opener
    for storage in opened:
        await storage.aclose()


@pytest.fixture
async def storage(open_store: OpenStorage) -> Storage:
    """A handle on a fresh, empty store of the backend under test."""
    return await open_store()
