"""What a test does when something it needs beyond Python is missing: skip here, fail in CI.

The full suite needs PostgreSQL, Neovim, Node (npm, and Claude Code from it), root (tmpfs and
bind mounts), Chromium (the web view's browser tests) and a few programs. A developer without
one sees the tests that need it skipped, each with its reason in the summary; under CI (the
environment variable CI set, as CI services and .ci/run set it) the same test fails, so CI
never passes by skipping. Every test that stops for a missing component calls `missing` (or
one of the `require_*` helpers below).

The markers name the big components, so `-m 'not postgres and not nvim and not node and not
root and not chromium'` runs the part of the suite that needs none of them (the README's test
subsets; tests/conftest.py applies the postgres, root and chromium markers from what a test
uses, the others are set where the tests are written).
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

POSTGRES = "postgres"
NEOVIM = "nvim"
NODE = "node"
ROOT = "root"
CHROMIUM = "chromium"
MARKERS = (POSTGRES, NEOVIM, NODE, ROOT, CHROMIUM)
"""The components with a marker of their own (registered in pyproject.toml)."""


def on_ci() -> bool:
    """Whether this run is CI's: CI is set to anything but "", "0" or "false"."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def missing(component: str, reason: str) -> NoReturn:
    """Stop the test for want of component: skip it with reason, or fail it under CI."""
    message = f"needs {component}: {reason}"
    if on_ci():
        pytest.fail(f"{message} (CI is set, so this fails instead of skipping)", pytrace=False)
    pytest.skip(message)


def require_program(program: str, component: str, reason: str) -> str:
    """The path of program on PATH, else the test stops for want of component."""
    found = shutil.which(program)
    if found is None:
        missing(component, f"{program} is not on PATH; {reason}")
    return found


def require_root(what: str) -> None:
    """Stop the test unless it runs as root, which what needs."""
    if os.geteuid() != 0:
        missing(ROOT, f"{what} needs root")
