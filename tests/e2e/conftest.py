"""Run the real `lazy` command in a subprocess, in a project folder of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Lazy = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (a git root) for the command to run in."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def lazy(project: Path) -> Lazy:
    """Run `lazy ARGS...` in the project; stdin is empty unless input= is given."""

    def run(
        *arguments: str, input: str = "", environment: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
            cwd=project,
            input=input,
            capture_output=True,
            text=True,
            env={**os.environ, **(environment or {})},
            timeout=60,
        )

    return run
