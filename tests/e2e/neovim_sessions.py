"""Running the Neovim plugin (editors/nvim) in a real headless Neovim against the real
`lazy engine`, for tests/e2e/test_neovim.py.

A store saved with the CLI (its records, one of them removed), a project of its own with
notes.md for each session, Neovim started on tests/e2e/nvim/plugin_spec.lua, which drives the
plugin as a user would and writes what it saw as JSON, and that JSON read back as a Session.
Neovim is required ($LAZY_NVIM, else nvim on PATH): CI installs Debian's package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.components import NEOVIM, require_program

REPOSITORY = Path(__file__).resolve().parents[2]
PLUGIN = REPOSITORY / "editors" / "nvim"
SPEC = Path(__file__).resolve().parent / "nvim" / "plugin_spec.lua"
ENGINE = [sys.executable, "-m", "lazy_memory.rpc.cli", "engine"]
TIMEOUT_MS = 15000
START_TIMEOUT_MS = 60000  # the engine imports pygls: ~1-2 s, far more on a loaded machine
NVIM_SECONDS = 180
WARNING = 2  # LSP DiagnosticSeverity.Warning, which vim.diagnostic keeps as is
ERROR_LEVEL = 4  # vim.log.levels.ERROR

NOTES = """# Notes
Deploying: see memory:deploy-steps before you start.
Style rules live in [[style-guide]].
The plain style-guide word names a record too.
This one is gone: memory:no-such-record
This one was removed: memory:removed-record
Complete here: memory:
Link: [[
"""

RECORDS = [
    (
        "deploy-steps",
        "project",
        "How we deploy to staging",
        "Run `make deploy` from the repository root.\n\nThen watch the dashboard.",
    ),
    ("style-guide", "feedback", "Prefer small modules named for what they hold", "One docstring."),
    ("release-train", "project", "Releases are cut every second Tuesday", "Tag from main."),
]
REMOVED = ("removed-record", "user", "Gone soon", "x")


@dataclass
class Session:
    """One headless Neovim run: what it saw, and what to show when an assertion fails."""

    observations: dict[str, Any]
    data_dir: Path
    project: Path
    log: str

    def step(self, name: str) -> Any:
        """The observations of one step, failing with the run's log if it did not complete."""
        found = self.observations.get(name)
        if found is None or (isinstance(found, dict) and "error" in found):
            pytest.fail(f"step {name!r} failed: {found!r}\n{self.log}", pytrace=False)
        return found


def nvim_binary() -> str:
    """The Neovim to test with ($LAZY_NVIM, else nvim on PATH); missing skips, or fails in CI."""
    wanted = os.environ.get("LAZY_NVIM", "nvim")
    return require_program(
        wanted, NEOVIM, "apt-get install neovim, as .ci/run does, or set LAZY_NVIM to an nvim"
    )


def clean_environment(base: Path) -> dict[str, str]:
    """The runner's environment without any lazy identity or store, Neovim's state in base."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LAZY_")}
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        environment[variable] = str(base / variable.lower())
    return environment


def cli(project: Path, data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run the checkout's `lazy` command in the project, on its store, as a human."""
    return subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**clean_environment(project.parent), "LAZY_DATA": str(data_dir)},
    )


def saved_store(base: Path) -> Path:
    """A store holding the records (one of them removed), saved with the CLI."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    data_dir = base / "data"
    for name, record_type, description, body in [*RECORDS, REMOVED]:
        save = ["memory", "save", name, "-t", record_type, "-d", description, "--body", body]
        cli(project, data_dir, *save)
    cli(project, data_dir, "memory", "rm", REMOVED[0])
    return data_dir


def corrupt_store(base: Path) -> Path:
    """A store that cannot be read: its memory.db is not a database."""
    data_dir = base / "data"
    data_dir.mkdir(parents=True)
    (data_dir / "memory.db").write_bytes(b"not a database at all " * 200)
    return data_dir


def prepare(base: Path, store: Path) -> tuple[Path, Path, Path]:
    """A project (a git root) with notes.md, and a copy of the store of its own."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    notes = project / "notes.md"
    notes.write_text(NOTES)
    data_dir = base / "data"
    shutil.copytree(store, data_dir)
    return project, notes, data_dir


def start(
    base: Path, store: Path, scenario: str, extra: dict[str, str]
) -> tuple[subprocess.Popen[str], Path]:
    """Start Neovim on the scenario; returns the process and where it writes its JSON."""
    project, notes, data_dir = prepare(base, store)
    output = base / "observations.json"
    spec = {
        "plugin_dir": str(PLUGIN),
        "cmd": ENGINE,
        "python": sys.executable,
        "data_dir": str(data_dir),
        "project": str(project),
        "notes": str(notes),
        "output": str(output),
        "scenario": scenario,
        "timeout_ms": TIMEOUT_MS,
        "start_timeout_ms": START_TIMEOUT_MS,
        "watchdog_ms": (NVIM_SECONDS - 10) * 1000,
    }
    spec_file = base / "spec.json"
    spec_file.write_text(json.dumps(spec))
    environment = {**clean_environment(base), "LAZY_NVIM_SPEC": str(spec_file), **extra}
    process = subprocess.Popen(
        [nvim_binary(), "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SPEC}"],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return process, output


def finish(process: subprocess.Popen[str], output: Path, base: Path) -> Session:
    """Wait for Neovim and read what it saw; a run that wrote nothing fails every test."""
    try:
        printed, _ = process.communicate(timeout=NVIM_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        printed, _ = process.communicate()
        pytest.fail(f"Neovim did not finish in {NVIM_SECONDS} s:\n{printed}", pytrace=False)
    logs = sorted(base.glob("xdg_*/**/lsp.log"))
    log = "\n".join(
        [f"nvim exit status {process.returncode}, output:\n{printed}"]
        + [f"--- {path}:\n{path.read_text()[-6000:]}" for path in logs]
    )
    if not output.exists():
        pytest.fail(f"Neovim wrote no observations.\n{log}", pytrace=False)
    observations = json.loads(output.read_text())
    if "fatal" in observations or process.returncode != 0:
        pytest.fail(f"the Neovim script failed: {observations.get('fatal')}\n{log}", pytrace=False)
    return Session(observations, base / "data", base / "project", log)


@contextmanager
def sessions_of(
    scenarios: dict[str, tuple[Path, Path, dict[str, str]]],
) -> Iterator[dict[str, Session]]:
    """One Neovim per scenario (its base folder, store and extra environment), run at once."""
    started = {
        name: (start(base, store, name, extra), base)
        for name, (base, store, extra) in scenarios.items()
    }
    try:
        yield {name: finish(*running, base) for name, (running, base) in started.items()}
    finally:
        for (process, _), _ in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def by_line(items: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Observations that carry a 0-based line, grouped by it."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        grouped.setdefault(item["line"], []).append(item)
    return grouped
