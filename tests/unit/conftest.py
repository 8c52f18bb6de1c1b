"""The unit tests' fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lazy_memory.adapters.sqlite.storage import SqliteStorage


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    """A fresh SQLite store in the test's folder, closed at its end."""
    storage = await SqliteStorage.open(tmp_path / "memory.db")
    yield storage
    await storage.aclose()
