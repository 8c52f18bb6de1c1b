"""Fixtures for every test: each test gets its own data directory and a clean identity.

Also the component markers (tests/components.py): each test that needs PostgreSQL or root is
marked here, from what it uses, so `-m 'not postgres and not root'` leaves it out.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tests.components import POSTGRES, ROOT
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
    "LAZY_EDITOR",
)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point LAZY_DATA at a fresh folder and drop any identity the test runner inherited."""
    for variable in _ISOLATED_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    data_dir = tmp_path / "lazy-data"
    monkeypatch.setenv("LAZY_DATA", str(data_dir))
    return data_dir


_ROOT_FIXTURES = frozenset({"mounted_data_dir"})
_ROOT_CALLS = frozenset({"small_tmpfs", "read_only_view", "require_root", "mknod"})
"""What a test calls that needs root: tmpfs and bind mounts, chown to others, device nodes."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that need PostgreSQL (its fixture, or a `postgres` backend parameter)
    and those that need root (a root fixture, or a call of a root helper in the test)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        parameters = set(map(str, callspec.params.values())) if callspec is not None else set()
        if "postgres_server" in fixtures or POSTGRES in parameters:
            item.add_marker(POSTGRES)
        function = getattr(item, "function", None)
        called = set(inspect.unwrap(function).__code__.co_names) if function else set()
        if fixtures & _ROOT_FIXTURES or called & _ROOT_CALLS:
            item.add_marker(ROOT)
