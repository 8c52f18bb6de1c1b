"""The SessionStart hook (`lazy memory context --hook`) never fails, never hangs, never blinds.

Each failure mode of a launch: the hook exits 0, prints the UNAVAILABLE marker (never the
empty-store section) and says why on stderr; a store that can be read prints its index.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.support.mounts import remount, small_tmpfs
from tests.support.postgres import unused_port

MARKER = "MEMORY INDEX UNAVAILABLE ("
EMPTY = "No memory records have been saved for this project yet."


def hook(lazy: Lazy, environment: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the hook as Claude Code does: no arguments but the command's own, empty stdin."""
    return lazy("memory", "context", "--hook", environment=environment)


def assert_marker(result: subprocess.CompletedProcess[str], cause: str) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(MARKER), result.stdout
    assert cause in result.stdout
    assert EMPTY not in result.stdout
    assert "Traceback" not in result.stderr
    assert "MEMORY INDEX UNAVAILABLE: " in result.stderr
    assert cause in result.stderr


@pytest.fixture
def data_dir(isolated_environment: Path) -> Path:
    return isolated_environment


def test_an_empty_store_is_the_empty_section_not_the_marker(lazy: Lazy) -> None:
    result = hook(lazy)

    assert result.returncode == 0
    assert EMPTY in result.stdout
    assert MARKER not in result.stdout


def test_a_store_with_records_prints_its_index(lazy: Lazy) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    result = hook(lazy)

    assert result.returncode == 0
    assert "- deploy (project): How we deploy\n" in result.stdout


def test_a_corrupt_sqlite_store(lazy: Lazy, data_dir: Path) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    for leftover in data_dir.glob("memory.db*"):
        leftover.unlink()
    (data_dir / "memory.db").write_bytes(b"this is not a database" * 100)

    assert_marker(hook(lazy), "memory.db")


def test_a_corrupt_files_store(lazy: Lazy, data_dir: Path) -> None:
    files = {"LAZY_STORAGE": "files"}
    lazy("memory", "save", "deploy", "-t", "project", "-d", "d", "--body", "b", environment=files)
    for path in data_dir.glob("memor*.json"):
        # A whole line: an unterminated last line is a torn append, which the store ignores.
        path.write_text("{ not json\n", encoding="utf-8")

    assert_marker(hook(lazy, files), str(data_dir))


def test_a_bad_lazy_toml(lazy: Lazy, project: Path) -> None:
    (project / "lazy.toml").write_text("[storage\nbackend = ", encoding="utf-8")

    assert_marker(hook(lazy), "lazy.toml")


def test_an_unreadable_compact_gives_the_plain_index(lazy: Lazy, data_dir: Path) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    with sqlite3.connect(data_dir / "memory.db") as connection:
        connection.execute("INSERT INTO compact (slot, content) VALUES (1, '{garbage')")

    result = hook(lazy)
    doctor = lazy("doctor", "--json")
    cleared = lazy("memory", "compact", "--clear")

    assert result.returncode == 0
    assert "- deploy (project): How we deploy\n" in result.stdout
    assert "compact cannot be read" in result.stderr
    assert "compact cannot be read" in json.loads(doctor.stdout)["advice"]
    assert cleared.returncode == 0
    assert "compact cannot be read" not in hook(lazy).stderr


def test_postgres_down(lazy: Lazy) -> None:
    port = unused_port()
    down = {"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": f"postgresql://lazy@127.0.0.1:{port}/m"}

    assert_marker(hook(lazy, down), f"127.0.0.1:{port}")


def test_a_remote_daemon_that_is_down(lazy: Lazy, tmp_path: Path) -> None:
    socket_path = tmp_path / "gone.sock"
    down = {"LAZY_STORAGE": "remote", "LAZY_REMOTE": f"unix:{socket_path}", "LAZY_TOKEN": "t"}

    assert_marker(hook(lazy, down), str(socket_path))


@pytest.fixture
def mute_listener() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    server.close()


@pytest.mark.parametrize("backend", ["remote", "postgres"])
def test_a_store_that_accepts_and_never_answers(
    lazy: Lazy, mute_listener: int, backend: str
) -> None:
    mute = {
        "remote": {"LAZY_REMOTE": f"tcp:127.0.0.1:{mute_listener}", "LAZY_TOKEN": "t"},
        "postgres": {"LAZY_PG_DSN": f"postgresql://lazy@127.0.0.1:{mute_listener}/m"},
    }[backend]
    started = time.monotonic()

    result = hook(lazy, {"LAZY_STORAGE": backend, "LAZY_CONNECT_TIMEOUT": "1", **mute})

    assert time.monotonic() - started < 20
    assert_marker(result, "")


def test_the_hook_prints_nothing_when_the_launcher_injected_the_section(lazy: Lazy) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    result = hook(lazy, {"LAZY_LAUNCHED": "1"})

    assert (result.returncode, result.stdout) == (0, "")


def test_an_agent_launch_gets_the_agent_section(lazy: Lazy, project: Path) -> None:
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = 10\n", encoding="utf-8")
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    agent = hook(lazy, {"LAZY_TASK_ID": ""})
    builder = hook(lazy)

    assert "lazy doctor" not in agent.stdout
    assert "lazy doctor" in builder.stdout
    assert agent.stdout == lazy("memory", "context", "--role", "agent").stdout


def test_each_launch_is_logged_where_the_store_can_be_written(lazy: Lazy, data_dir: Path) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    hook(lazy)
    hook(lazy, {"LAZY_TASK_ID": "t-1"})  # an agent writes nothing, not even this log
    hook(lazy, {"LAZY_ROLE": "agent"})

    lines = (data_dir / "launches.jsonl").read_text(encoding="utf-8").splitlines()
    launches = [json.loads(line) for line in lines]
    assert [launch["role"] for launch in launches] == ["builder", "agent"]
    assert launches[0]["listed"] == launches[0]["records"] == 1
    assert launches[0]["newest"]["name"] == "deploy"
    assert "text" not in launches[0]


def test_a_launch_on_a_store_not_made_yet_creates_nothing(lazy: Lazy, data_dir: Path) -> None:
    result = hook(lazy)

    assert result.returncode == 0
    assert not data_dir.exists()


def test_the_hook_imports_neither_pygls_nor_mcp_nor_anthropic(project: Path) -> None:
    probe = (
        "import sys; from lazy_memory.rpc.cli import main; status = main(['memory', 'context',"
        " '--hook']); heavy = [m for m in ('pygls', 'mcp', 'anthropic', 'asyncpg', 'yaml')"
        " if m in sys.modules]; sys.stderr.write(repr(heavy)); sys.exit(status)"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0
    assert result.stderr.endswith("[]")


def test_a_read_only_store_prints_its_index(lazy: Lazy, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        store = {"LAZY_DATA": str(disk / "data")}
        lazy(
            "memory",
            "save",
            "deploy",
            "-t",
            "project",
            "-d",
            "How we deploy",
            "--body",
            "b",
            environment=store,
        )
        remount(disk, "ro")
        try:
            result = hook(lazy, store)
        finally:
            remount(disk, "rw")

    assert result.returncode == 0
    assert "- deploy (project): How we deploy\n" in result.stdout


def test_a_store_whose_write_lock_is_held_prints_its_index(lazy: Lazy, data_dir: Path) -> None:
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(60)",
            str(data_dir / "memory.db"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        started = time.monotonic()
        result = hook(lazy)
    finally:
        holder.kill()
        holder.wait()

    assert time.monotonic() - started < 10
    assert result.returncode == 0
    assert "- deploy (project): How we deploy\n" in result.stdout


def test_a_store_that_hangs_the_light_render_gives_the_marker_in_time(
    lazy: Lazy, project: Path, data_dir: Path
) -> None:
    # A history that is a pipe with no writer: opening it blocks, as a hung mount would. The
    # hook reads a files store without the engine, and is bounded all the same.
    (project / "lazy.toml").write_text("[claude_code]\nhook_timeout_seconds = 1\n")
    data_dir.mkdir()
    os.mkfifo(data_dir / "memory-history.json")
    started = time.monotonic()

    result = hook(lazy, {"LAZY_STORAGE": "files"})

    assert time.monotonic() - started < 10
    assert_marker(result, "the store did not answer within 1 s")
