"""For every test of `lazy init --claude-code` here: `harness_home`, its own HOME and
CLAUDE_CONFIG_DIR (no harness memory unless it writes some, no global git configuration) and
no `claude` on PATH; and `git_repository`, the project made a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.init_claude_code.files import path_without
from tests.support.components import require_program


@pytest.fixture(autouse=True)
def harness_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code config dir of the test's own, so no real harness memory is read."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("PATH", path_without("claude"))
    return config


@pytest.fixture(autouse=True)
def git_repository(project: Path, harness_home: Path) -> Path:
    """The project as a real git repository: init asks git what it ignores."""
    git = require_program("git", "git", "lazy init asks git whether it ignores local settings")
    subprocess.run([git, "init", "-q", str(project)], check=True, timeout=60)
    return project
