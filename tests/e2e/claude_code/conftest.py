"""Fixtures for the tests that run the real Claude Code CLI (see harness.py for how).

- `claude_binary` (session): the path of the claude to test ($LAZY_CLAUDE, else `claude` on
  PATH), checked to be the pinned version. Not installed: the test skips with INSTALL_HINT,
  or fails when CI is set (tests/components.py); a $LAZY_CLAUDE that does not exist, or
  another version, fails.
- `claude_code`: a ClaudeCode bound to it and to `fake_anthropic` (tests/fake_anthropic.py,
  replying "done" until scripted), with fresh CLAUDE_CONFIG_DIR and HOME;
  `claude_code.run(prompt, *cli_args, cwd=project, env=..., timeout=...)`.
- `project` (from tests/e2e/conftest.py): an empty git root to run in.

Every test collected here gets the `claude_code` and `node` markers: `-m "not claude_code"`
leaves them out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.components import missing
from tests.e2e.claude_code.harness import (
    CLAUDE_ENV,
    INSTALL_HINT,
    PINNED_VERSION,
    ClaudeCode,
    claude_version,
    locate_claude,
)
from tests.fake_anthropic import FakeAnthropic

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this folder `claude_code`, and `node`: Claude Code runs on it."""
    for item in items:
        if _HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.claude_code)
            item.add_marker(pytest.mark.node)


@pytest.fixture(scope="session")
def claude_binary() -> str:
    """The claude binary, of the pinned version; skipped (failed under CI) when missing."""
    binary = locate_claude()
    if binary is None:
        missing("Claude Code", INSTALL_HINT)
    if not Path(binary).exists():
        pytest.fail(f"{CLAUDE_ENV} names {binary}, which does not exist. {INSTALL_HINT}")
    version = claude_version(binary)
    if version != PINNED_VERSION:
        pytest.fail(
            f"{binary} is Claude Code {version}, but the limits were measured on "
            f"{PINNED_VERSION} (CLAUDE_CODE_MEASURED_VERSION in lazy_memory.adapters.config): "
            "install the pinned version, or re-measure and update the constant"
        )
    return binary


@pytest.fixture
def claude_code(claude_binary: str, fake_anthropic: FakeAnthropic, tmp_path: Path) -> ClaudeCode:
    """The pinned Claude Code, talking to fake_anthropic, its state in tmp_path."""
    fake_anthropic.script("done")
    return ClaudeCode(claude_binary, fake_anthropic, tmp_path / "claude-state")
