"""The reliability suite's scale (a fast subset by default, the full run on demand) and figures.

`python -m pytest tests/reliability` runs the fast subset CI runs on every change;
`LAZY_RELIABILITY=full python -m pytest tests/reliability` runs every trial at full size.
Each test reports what it measured through the `figures` fixture; the figures are printed
together at the end of the run, so the README can quote them (tests/reliability/figures.py).

Also the fixtures the reliability tests share: `scene` (a seeded store and a project, for the
boundary tests), `spawn_engine` (engines killed at the test's end), `workspace` (a module's
project and empty harness).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

import pytest

from lazy_memory.adapters.claude_code.memories import slug
from lazy_memory.adapters.tokens import TokenStore
from tests.reliability.boundary_scene import LOGS, Scene, seed
from tests.reliability.engines import SpawnEngine
from tests.reliability.figures import FIGURES, FULL, WORKER_OUTPUT, Figures, Scale
from tests.support.jsonrpc import RawClient


@pytest.fixture(scope="session")
def scale() -> Scale:
    """The size of this run."""
    return Scale(full=FULL)


@pytest.fixture(scope="session")
def figures() -> Figures:
    """Where tests report their figures; printed at the end of the run."""
    return FIGURES


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand the figures to the controller, which prints them."""
    handed = getattr(session.config, "workeroutput", None)
    if handed is not None:
        handed[WORKER_OUTPUT] = FIGURES.lines


@pytest.fixture
def scene(tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    """The seeded store in LAZY_DATA; `lazy` processes started now run in the project."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    config = tmp_path / "claude"
    memory = config / "projects" / slug(project.resolve()) / "memory"
    memory.mkdir(parents=True)
    (memory / "harness-note.md").write_text(
        "---\nname: harness-note\ndescription: from the harness\ntype: project\n---\nbody\n"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / LOGS).mkdir()
    for variable, value in {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(config),
        "LAZY_STORAGE": "sqlite",
        "LAZY_OFFLINE": "1",
        "ANTHROPIC_API_KEY": "",
    }.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.chdir(project)
    asyncio.run(seed(isolated_environment))
    token, _ = TokenStore.in_data_dir(isolated_environment).add("builder", "owner")
    return Scene(tmp_path, project, isolated_environment, memory, outside, token.id)


@pytest.fixture
async def spawn_engine() -> AsyncIterator[SpawnEngine]:
    """Start engines for the test; any still running when it ends is killed."""
    started: list[RawClient] = []

    async def spawn(environment: Mapping[str, str], log: Path) -> RawClient:
        client = await RawClient.spawn(["engine"], environment, log)
        started.append(client)
        return client

    yield spawn
    for client in started:
        process = client.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    """A folder for the module's processes: a project (a git root) and an empty harness."""
    with tempfile.TemporaryDirectory(prefix="lazy-hostile-") as directory:
        root = Path(directory)
        (root / "project" / ".git").mkdir(parents=True)
        (root / "home").mkdir()
        (root / "claude").mkdir()
        yield root
