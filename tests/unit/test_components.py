"""A missing component skips a test with its reason, and fails it under CI
(tests/support/components.py).

Each case runs pytest in a subprocess on a small test file, with this repository's
configuration (markers) and tests/conftest.py as a plugin, with CI set or unset.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.components import MARKERS

REPOSITORY = Path(__file__).resolve().parents[2]
NEEDS_A_MISSING_PROGRAM = """
from tests.support.components import NEOVIM, require_program


def test_needs_it() -> None:
    require_program("no-such-program-for-lazy-tests", NEOVIM, "apt-get install it")
"""
MARKED_BY_WHAT_THEY_USE = """
import os

import pytest

from tests.support.mounts import small_tmpfs


def test_mounts(tmp_path):
    with small_tmpfs(tmp_path / "disk", "1m"):
        pass


def test_devices(tmp_path):
    os.mknod(tmp_path / "device")


def test_server(postgres_server):
    pass


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_backends(backend):
    pass


@pytest.fixture
def browser():
    return None


def test_in_a_browser(browser):
    pass


def test_plain():
    pass
"""


@pytest.fixture
def test_file(tmp_path: Path) -> Path:
    """Where a throwaway test module goes: outside the repository, run with its conftest."""
    return tmp_path / "test_probe.py"


def pytest_run(path: Path, *arguments: str, ci: str | None) -> subprocess.CompletedProcess[str]:
    """Run pytest on path in the repository, CI set to ci (or unset)."""
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        environment["CI"] = ci
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs"),
            *("-c", str(REPOSITORY / "pyproject.toml"), "-p", "tests.conftest"),
            *arguments,
            str(path),
        ],
        cwd=REPOSITORY,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_a_missing_component_skips_with_its_reason_outside_ci(
    test_file: Path, ci: str | None
) -> None:
    test_file.write_text(NEEDS_A_MISSING_PROGRAM)

    run = pytest_run(test_file, ci=ci)

    assert run.returncode == 0, run.stdout
    assert "1 skipped" in run.stdout
    assert "SKIPPED" in run.stdout
    assert "needs nvim: no-such-program-for-lazy-tests is not on PATH; apt-get install it" in (
        run.stdout
    )


@pytest.mark.parametrize("ci", ["1", "true"])
def test_a_missing_component_fails_under_ci(test_file: Path, ci: str) -> None:
    test_file.write_text(NEEDS_A_MISSING_PROGRAM)

    run = pytest_run(test_file, ci=ci)

    assert run.returncode == 1, run.stdout
    assert "1 failed" in run.stdout
    assert "skipped" not in run.stdout
    assert "needs nvim" in run.stdout
    assert "CI is set, so this fails instead of skipping" in run.stdout


def test_tests_are_marked_with_the_components_they_use(test_file: Path) -> None:
    test_file.write_text(MARKED_BY_WHAT_THEY_USE)
    subset = " and ".join(f"not {marker}" for marker in MARKERS)

    run = pytest_run(test_file, "--collect-only", "-q", "-m", subset, ci=None)

    collected = [line.split("::")[1] for line in run.stdout.splitlines() if "::" in line]
    assert collected == ["test_backends[sqlite]", "test_plain"], run.stdout
