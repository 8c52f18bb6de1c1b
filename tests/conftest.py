"""Fixtures for every test: each test gets its own data directory and a clean identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_anthropic import fake_anthropic, no_real_anthropic  # noqa: F401
from tests.postgres import postgres_server  # noqa: F401

_ISOLATED_VARIABLES = (
    "LAZY_DATA",
    "LAZY_STORAGE",
    "LAZY_ACTOR",
    "LAZY_TASK_ID",
    "LAZY_PG_DSN",
    "LAZY_PROJECT",
    "LAZY_REMOTE",
    "LAZY_TOKEN",
    "LAZY_TLS_CA",
    "LAZY_OFFLINE",
    "LAZY_CONNECT_TIMEOUT",
    "LAZY_POLL_SECONDS",
    "LAZY_LAUNCHED",
    "LAZY_ROLE",
)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point LAZY_DATA at a fresh folder and drop any identity the test runner inherited."""
    for variable in _ISOLATED_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    data_dir = tmp_path / "lazy-data"
    monkeypatch.setenv("LAZY_DATA", str(data_dir))
    return data_dir
