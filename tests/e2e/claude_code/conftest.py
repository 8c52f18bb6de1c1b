"""Fixtures for the tests that run the real Claude Code CLI (see harness.py for how).

- `claude_binary` (session): the path of the claude to test ($LAZY_CLAUDE, else `claude` on
  PATH), checked to be the pinned version. Not installed: the test skips with INSTALL_HINT,
  or fails when CI is set (tests/support/components.py); a $LAZY_CLAUDE that does not exist, or
  another version, fails.
- `older_claude_binary` (session): the same for the older release the set-up must still work
  on, named only by $LAZY_CLAUDE_2_1_197 (OLDER_CLAUDE_ENV).
- `claude_code`: a ClaudeCode bound to the pinned claude and to `fake_anthropic`
  (tests/support/fake_anthropic.py, replying "done" until scripted), with fresh
  CLAUDE_CONFIG_DIR and HOME;
  `claude_code.run(prompt, *cli_args, cwd=project, env=..., timeout=...)`.
- `each_claude_code`: the same, once on each release (the test's id names the version).
- `project` (from tests/e2e/conftest.py): an empty git root to run in.

Every test collected here gets the `claude_code` and `node` markers: `-m "not claude_code"`
leaves them out.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.claude_code.harness import (
    CLAUDE_ENV,
    INSTALL_HINT,
    OLDER_CLAUDE_ENV,
    OLDER_VERSION,
    PINNED_VERSION,
    ClaudeCode,
    claude_version,
    install_hint,
    locate_claude,
)
from tests.support.components import missing
from tests.support.fake_anthropic import FakeAnthropic

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
    return _checked(binary, PINNED_VERSION, CLAUDE_ENV)


@pytest.fixture(scope="session")
def older_claude_binary() -> str:
    """The older release's claude binary; skipped (failed under CI) when missing."""
    binary = os.environ.get(OLDER_CLAUDE_ENV)
    if not binary:
        missing(f"Claude Code {OLDER_VERSION}", install_hint(OLDER_VERSION, OLDER_CLAUDE_ENV))
    return _checked(binary, OLDER_VERSION, OLDER_CLAUDE_ENV)


def _checked(binary: str, version: str, variable: str) -> str:
    """binary, if it exists and is Claude Code version; else the test fails, saying why."""
    if not Path(binary).exists():
        pytest.fail(
            f"{variable} names {binary}, which does not exist. {install_hint(version, variable)}"
        )
    found = claude_version(binary)
    if found != version:
        pytest.fail(
            f"{binary} is Claude Code {found}, not {version} (CLAUDE_CODE_MEASURED_VERSION or "
            "CLAUDE_CODE_OLDER_VERSION in lazy_memory.adapters.config): install that version, "
            "or re-measure and update the constant"
        )
    return binary


@pytest.fixture
def claude_code(claude_binary: str, fake_anthropic: FakeAnthropic, tmp_path: Path) -> ClaudeCode:
    """The pinned Claude Code, talking to fake_anthropic, its state in tmp_path."""
    return _bound(claude_binary, fake_anthropic, tmp_path)


@pytest.fixture(params=[PINNED_VERSION, OLDER_VERSION])
def each_claude_code(
    request: pytest.FixtureRequest, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> ClaudeCode:
    """claude_code, on the pinned release and then on the older one."""
    fixture = "claude_binary" if request.param == PINNED_VERSION else "older_claude_binary"
    return _bound(request.getfixturevalue(fixture), fake_anthropic, tmp_path)


def _bound(binary: str, api: FakeAnthropic, tmp_path: Path) -> ClaudeCode:
    api.script("done")
    return ClaudeCode(binary, api, tmp_path / "claude-state")
