"""The daemon refuses to start on a data directory or token file someone else could write.

Whoever can write either can plant a token or the store behind the daemon, so its tokens
would guard nothing (docs/threat-model.md). The refusal is one line naming the path, its mode
and the fix, and comes before the daemon listens: no socket is ever created.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.components import require_root
from tests.support.daemon import LAZY, add_token, running_daemon

FAILED = 4
"""The exit status of InvalidConfig, which the refusal is."""


@pytest.fixture
def socket_path() -> Iterator[Path]:
    """A unix socket's path in a short folder of its own, removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="lzp-"))
    yield directory / "s"
    shutil.rmtree(directory, ignore_errors=True)


def start(data_dir: Path, socket: Path) -> subprocess.CompletedProcess[str]:
    """Start a daemon on data_dir and wait for it to exit (a daemon that starts never does)."""
    return subprocess.run(
        [*LAZY, "engine", "--listen", f"unix:{socket}"],
        env={**os.environ, "LAZY_DATA": str(data_dir), "LAZY_STORAGE": "sqlite"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def assert_refused(done: subprocess.CompletedProcess[str], socket: Path, *said: str) -> None:
    """Refused in one line that says each of said, before anything listened."""
    assert done.returncode == FAILED, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    for text in said:
        assert text in done.stderr, done.stderr
    assert not socket.exists()


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o720], ids=oct)
def test_a_data_directory_others_can_write_is_refused(
    isolated_environment: Path, socket_path: Path, mode: int
) -> None:
    add_token(isolated_environment, "builder", "b1")
    isolated_environment.chmod(mode)

    done = start(isolated_environment, socket_path)

    assert_refused(
        done,
        socket_path,
        f"the data directory {isolated_environment} is writable by its group or others",
        f"(mode {mode:04o})",
        f"`chmod 700 {isolated_environment}`",
    )


@pytest.mark.parametrize("mode", [0o660, 0o606, 0o666, 0o620], ids=oct)
def test_a_token_file_others_can_write_is_refused(
    isolated_environment: Path, socket_path: Path, mode: int
) -> None:
    add_token(isolated_environment, "builder", "b1")
    token_file = isolated_environment / "tokens.json"
    token_file.chmod(mode)

    done = start(isolated_environment, socket_path)

    assert_refused(
        done,
        socket_path,
        f"the token file {token_file} is writable by its group or others",
        f"(mode {mode:04o})",
        f"`chmod 600 {token_file}`",
    )


def test_a_data_directory_another_user_owns_is_refused(
    isolated_environment: Path, socket_path: Path
) -> None:
    require_root("giving a folder to another user")
    add_token(isolated_environment, "builder", "b1")
    isolated_environment.chmod(0o700)
    os.chown(isolated_environment, 4242, 4242)

    done = start(isolated_environment, socket_path)

    assert_refused(
        done,
        socket_path,
        f"the data directory {isolated_environment} (mode 0700) belongs to uid 4242",
        f"`chmod 700 {isolated_environment}`",
    )


@pytest.mark.parametrize(("directory_mode", "file_mode"), [(0o700, 0o600), (0o755, 0o644)])
def test_a_store_only_its_owner_can_write_is_served(
    isolated_environment: Path, socket_path: Path, directory_mode: int, file_mode: int
) -> None:
    add_token(isolated_environment, "builder", "b1")
    isolated_environment.chmod(directory_mode)
    (isolated_environment / "tokens.json").chmod(file_mode)

    with running_daemon(isolated_environment, f"unix:{socket_path}") as daemon:
        assert socket_path.exists()
        assert daemon.stop() == 0


def test_a_missing_data_directory_is_created_private(
    isolated_environment: Path, socket_path: Path
) -> None:
    assert not isolated_environment.exists()

    with running_daemon(isolated_environment, f"unix:{socket_path}") as daemon:
        assert stat.S_IMODE(isolated_environment.stat().st_mode) == 0o700
        assert daemon.stop() == 0


def test_token_commands_create_the_data_directory_private(
    isolated_environment: Path,
) -> None:
    add_token(isolated_environment, "builder", "b1")

    assert stat.S_IMODE(isolated_environment.stat().st_mode) == 0o700
