"""`harness_home`, for every test of `lazy init --claude-code` here: each test gets its own
HOME and CLAUDE_CONFIG_DIR (no harness memory unless it writes some) and no `claude` on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.init_claude_code.files import path_without


@pytest.fixture(autouse=True)
def harness_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code config dir of the test's own, so no real harness memory is read."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("PATH", path_without("claude"))
    return config
