"""The conformance suite's fixtures: every test runs once per storage backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from lazy_memory.adapters import BACKENDS, open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.ports import Storage
from tests.support.stores import OpenStorage, store_environment, store_settings


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend under test; also exported as LAZY_STORAGE for writer subprocesses."""
    name: str = request.param
    monkeypatch.setenv("LAZY_STORAGE", name)
    return name


@pytest.fixture
def settings(
    request: pytest.FixtureRequest,
    backend: str,
    isolated_environment: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Settings]:
    """Settings for a fresh, empty store of the backend under test (tests/support/stores.py).

    The environment writer subprocesses inherit points at it too.
    """
    with store_settings(backend, tmp_path, isolated_environment, request, "conformance") as opened:
        for variable, value in store_environment(opened).items():
            monkeypatch.setenv(variable, value)
        yield opened


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
