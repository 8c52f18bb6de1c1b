"""The hook shows the section the last one of its role kept while the store is as it left it,
and only then.

A builder's hook and an agent's each keep the section they rendered beside a SQLite or files
store (adapters/launch/cache.py); the next one of the role shows it without reading the store.
What it shows must be what rendering would show, byte for byte on stdout and stderr, and any
change to the store, its settings or the session's role must render anew.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy

KEPT = "launch-cache-builder.json"
KEPT_BY_AGENT = "launch-cache-agent.json"
HOOK = ("memory", "context", "--hook")
OVER = "Injected memory context is over the advisory size threshold. Run lazy doctor for details."


@pytest.fixture(params=["sqlite", "files"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs on both backends that keep a section."""
    backend: str = request.param
    monkeypatch.setenv("LAZY_STORAGE", backend)
    return backend


def hook(lazy: Lazy, environment: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The hook as Claude Code runs it."""
    done = lazy(*HOOK, environment=environment)
    assert done.returncode == 0, done.stderr
    return done


def seeded(lazy: Lazy, count: int) -> None:
    for number in range(count):
        saved = lazy("memory", "save", f"note-{number}", "-t", "project", "-d", f"note {number}")
        assert saved.returncode == 0, saved.stderr


def imports_of_a_hook(project: Path) -> set[str]:
    """The modules a hook run imports (python -X importtime), by name."""
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lazy_memory.rpc.cli",
            "memory",
            "context",
            "--hook",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }


@pytest.mark.parametrize(
    ("session", "kept_in"),
    [
        ({}, KEPT),
        ({"LAZY_TASK_ID": ""}, KEPT_BY_AGENT),  # an empty task id is an agent too
        ({"LAZY_ROLE": "agent"}, KEPT_BY_AGENT),
    ],
    ids=["builder", "agent-with-a-task-id", "agent-by-role"],
)
def test_a_kept_section_is_what_rendering_shows_and_reads_no_store(
    lazy: Lazy,
    project: Path,
    isolated_environment: Path,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    session: dict[str, str],
    kept_in: str,
) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 500\n")
    seeded(lazy, 30)  # over warn_bytes: the warning is said every time
    for variable, value in session.items():
        monkeypatch.setenv(variable, value)
    rendered = hook(lazy)
    assert (isolated_environment / kept_in).is_file()
    kept = hook(lazy)

    assert (kept.stdout, kept.stderr) == (rendered.stdout, rendered.stderr)
    assert (
        kept.stdout == lazy("memory", "context", "--role", "agent" if session else "builder").stdout
    )
    assert OVER in kept.stderr
    # The launch log is the builder's (and a launcher's); an agent's process writes none.
    log = isolated_environment / "launches.jsonl"
    assert len(log.read_text().splitlines() if log.exists() else []) == (
        0 if "LAZY_TASK_ID" in session else 2
    )
    modules = imports_of_a_hook(project)
    assert not {"pydantic", "asyncio", "sqlite3", "lazy_memory.engine.context"} & modules


def test_every_change_to_the_store_renders_anew(
    lazy: Lazy, project: Path, isolated_environment: Path, backend: str
) -> None:
    seeded(lazy, 3)
    hook(lazy)
    lazy("memory", "save", "fresh", "-t", "user", "-d", "written after the last launch")
    assert "fresh" in hook(lazy).stdout

    lazy("memory", "rm", "note-1")
    assert "note-1" not in hook(lazy).stdout

    assert lazy("memory", "compact", "--mechanical").returncode == 0
    compacted = hook(lazy).stdout
    cleared = lazy("memory", "compact", "--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert hook(lazy).stdout != compacted


def test_a_write_straight_into_the_database_renders_anew(
    lazy: Lazy, project: Path, isolated_environment: Path
) -> None:
    seeded(lazy, 3)
    hook(lazy)
    # A write by another program, not through lazy-memory, moves the key too.
    with sqlite3.connect(isolated_environment / "memory.db") as connection:
        connection.execute(
            "UPDATE records SET description = 'edited behind' WHERE name = ?", ("note-2",)
        )
    assert "edited behind" in hook(lazy).stdout


def test_settings_and_roles_render_anew(
    lazy: Lazy, project: Path, isolated_environment: Path, backend: str
) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 500\n")
    seeded(lazy, 30)
    builder = hook(lazy)
    assert "lazy doctor" in builder.stdout  # a builder over the size is pointed at doctor
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 100000\n")
    quiet = hook(lazy)
    assert OVER in builder.stderr
    assert OVER not in quiet.stderr

    kept_before = (isolated_environment / KEPT).read_bytes()
    agent = hook(lazy, {"LAZY_TASK_ID": "t-1"})
    # The agent's own section, rendered: never the builder's kept one, which stays as it was.
    assert agent.stdout == lazy("memory", "context", "--role", "agent").stdout
    assert (isolated_environment / KEPT).read_bytes() == kept_before
    assert json.loads((isolated_environment / KEPT_BY_AGENT).read_text())["text"] == agent.stdout


def test_a_damaged_kept_section_is_rendered_anew(
    lazy: Lazy, project: Path, isolated_environment: Path, backend: str
) -> None:
    seeded(lazy, 3)
    rendered = hook(lazy)
    for damage in (b"", b"{", b'{"key": 1}', b"\xff\xfe", json.dumps([1]).encode()):
        (isolated_environment / KEPT).write_bytes(damage)
        again = hook(lazy)
        assert (again.stdout, again.stderr) == (rendered.stdout, rendered.stderr)


def test_a_store_not_made_yet_keeps_nothing(
    lazy: Lazy, project: Path, isolated_environment: Path, backend: str
) -> None:
    hook(lazy)
    assert not isolated_environment.exists()


def test_a_store_broken_after_a_kept_section_gives_the_marker(
    lazy: Lazy, isolated_environment: Path, backend: str
) -> None:
    seeded(lazy, 3)
    hook(lazy)
    assert (isolated_environment / KEPT).is_file()
    store = isolated_environment / ("memory.db" if backend == "sqlite" else "memory-history.json")
    damaged = bytearray(store.read_bytes())
    damaged[:16] = b"not a database!!"
    store.write_bytes(bytes(damaged))

    broken = hook(lazy)
    assert broken.stdout.startswith("MEMORY INDEX UNAVAILABLE ("), broken.stdout
    assert "note-0" not in broken.stdout
