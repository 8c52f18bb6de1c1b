"""The trees the memory reader's tests run on, each in the test's own folder: a HOME with its
projects folder, a git repository for the project, the project's memory directory, and a data
directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.harness_reader.tree import claude_slug, git


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


@pytest.fixture
def projects(home: Path) -> Path:
    return home / ".claude" / "projects"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with one commit; its path has a space, which the slug turns into a dash."""
    root = tmp_path / "work" / "my repo"
    root.mkdir(parents=True)
    git("init", "-q", str(root))
    git("-C", str(root), "commit", "-q", "--allow-empty", "-m", "initial")
    return root


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "lazy-data"


@pytest.fixture
def memory(projects: Path, project: Path) -> Path:
    """The project's own Claude Code memory directory."""
    directory = projects / claude_slug(project) / "memory"
    directory.mkdir(parents=True)
    return directory
