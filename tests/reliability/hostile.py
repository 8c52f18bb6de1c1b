"""Hostile input (issue #11, part 3): what the test_hostile_*.py modules share.

The heading their figures go under, Hypothesis settings sized for the run, the `workspace`
fixture (registered by conftest.py): a folder for each module's `lazy` processes (a project and
an empty harness), the environment they run in, and the one `lazy engine` or `lazy mcp` a module
shares among its examples.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hypothesis import HealthCheck, settings

from tests.reliability.live_engine import LiveEngine, LiveMcp, engine_environment

if TYPE_CHECKING:  # the conftest imports this module's fixture
    from tests.reliability.figures import Scale

HEADING = "hostile input"
Live = TypeVar("Live", LiveEngine, LiveMcp)


def run_settings(scale: Scale, fast: int, full: int) -> settings:
    """Hypothesis settings for this run's size; no deadline (real processes answer)."""
    return settings(
        max_examples=scale.pick(fast, full),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def process_environment(workspace: Path, data_dir: Path, **extra: str) -> dict[str, str]:
    """A `lazy` process's environment: its store, no model, and a harness of its own."""
    return engine_environment(
        data_dir,
        HOME=str(workspace / "home"),
        CLAUDE_CONFIG_DIR=str(workspace / "claude"),
        LAZY_OFFLINE="1",
        ANTHROPIC_API_KEY="",
        **extra,
    )


def shared_process(kind: type[Live], workspace: Path, name: str) -> Iterator[Live]:
    """A builder's `lazy` process of kind on a sqlite store, for a module-scoped fixture to yield.

    Its store is the workspace's `<name>-data`, its log `<name>.log`; it is closed after the module.
    """
    live = kind(
        process_environment(workspace, workspace / f"{name}-data", LAZY_ACTOR="fuzzer"),
        workspace / f"{name}.log",
        cwd=workspace / "project",
    )
    yield live
    live.close()
