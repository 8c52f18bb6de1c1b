"""Bad input to `lazy memory`: one clear line on stderr, a non-zero exit, nothing written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.support.mounts import remount, small_tmpfs


def assert_one_line_error(result: object, status: int, message: str) -> None:
    returncode, stdout, stderr = (getattr(result, a) for a in ("returncode", "stdout", "stderr"))
    assert returncode == status, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("lazy: error: ")
    assert message in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-t", "opinion", "-d", "x"], "unknown type 'opinion': use one of user, feedback"),
        (["-t", "user", "-d", ""], "the description is empty"),
        (["-t", "user", "-d", "   "], "the description is empty"),
        (["-t", "user", "-d", "x" * 201], "the description is 201 characters; the limit is 200"),
        (["-t", "user", "-d", "two\nlines"], "the description must be one line"),
        (["-t", "user"], "'good-name' is a new record: give it a type and a description"),
    ],
)
def test_invalid_saves_are_refused_and_write_nothing(
    lazy: Lazy, arguments: list[str], message: str
) -> None:
    refused = lazy("memory", "save", "good-name", *arguments, "--body", "b")

    assert_one_line_error(refused, 4, message)
    assert json.loads(lazy("memory", "history", "--json").stdout) == []


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (".dot-first", "'.dot-first'"),
        (" space-first", "' space-first'"),
        ("x" * 201, f"'{'x' * 60}'… (201 characters)"),
        ("slash/name", "'slash/name'"),
        ("esc\x1bname", "'esc\\x1bname'"),
        ("rlo\u202ename", "'rlo\\u202ename'"),
        ("x (user): y", "'x (user): y'"),
    ],
)
def test_bad_names_are_refused(lazy: Lazy, name: str, shown: str) -> None:
    refused = lazy("memory", "save", name, "-t", "user", "-d", "d", "--body", "b")

    assert_one_line_error(refused, 4, f"invalid name {shown}")


def test_a_description_of_exactly_200_characters_is_accepted(lazy: Lazy) -> None:
    assert lazy("memory", "save", "edge", "-t", "user", "-d", "x" * 200).returncode == 0


def test_an_update_with_a_bad_field_keeps_the_old_record(lazy: Lazy) -> None:
    lazy("memory", "save", "kept", "-t", "user", "-d", "original", "--body", "b")

    assert lazy("memory", "save", "kept", "-t", "bogus").returncode == 4
    assert lazy("memory", "save", "kept", "-d", "y" * 300).returncode == 4

    record = json.loads(lazy("memory", "show", "kept", "--json").stdout)
    assert (record["type"], record["description"], record["revision"]) == ("user", "original", 1)


@pytest.mark.parametrize(
    "arguments",
    [["show", "ghost"], ["rm", "ghost"], ["history", "ghost"]],
)
def test_a_missing_record_is_not_found(lazy: Lazy, arguments: list[str]) -> None:
    assert_one_line_error(lazy("memory", *arguments), 3, "'ghost'")


def test_a_stale_if_revision_is_a_conflict(lazy: Lazy) -> None:
    lazy("memory", "save", "cas", "-t", "user", "-d", "d", "--body", "1")
    lazy("memory", "save", "cas", "--body", "2")

    stale = lazy("memory", "save", "cas", "--body", "3", "--if-revision", "1")

    assert_one_line_error(stale, 5, "'cas' is at revision 2, not 1")
    assert lazy("memory", "save", "cas", "--body", "3", "--if-revision", "2").returncode == 0


def test_an_agent_session_cannot_write(lazy: Lazy) -> None:
    lazy("memory", "save", "mine", "-t", "user", "-d", "d", "--body", "b")
    agent = {"LAZY_TASK_ID": "task-42"}

    saved = lazy(
        "memory", "save", "theirs", "-t", "user", "-d", "d", "--body", "b", environment=agent
    )
    removed = lazy("memory", "rm", "mine", environment=agent)

    assert_one_line_error(saved, 6, "agent task 'task-42'")
    assert_one_line_error(removed, 6, "agents are read-only")
    assert lazy("memory", "show", "mine", environment=agent).returncode == 0
    assert len(json.loads(lazy("memory", "history", "--json").stdout)) == 1


@pytest.mark.parametrize("backend", ["sqlite", "files"])
def test_a_corrupted_store_is_reported_not_overwritten(
    lazy: Lazy, backend: str, isolated_environment: Path
) -> None:
    environment = {"LAZY_STORAGE": backend}
    lazy("memory", "save", "a", "-t", "user", "-d", "d", "--body", "b", environment=environment)
    damaged = isolated_environment / ("memory.db" if backend == "sqlite" else "memories.json")
    damaged.write_bytes(b"\x00garbage{")

    listed = lazy("memory", "list", environment=environment)
    saved = lazy("memory", "save", "b", "-t", "user", "-d", "d", environment=environment)

    assert_one_line_error(listed, 7, str(damaged))
    assert_one_line_error(saved, 7, str(damaged))
    assert damaged.read_bytes() == b"\x00garbage{"


@pytest.mark.parametrize("backend", ["sqlite", "files"])
def test_a_data_directory_that_cannot_be_created_is_reported(lazy: Lazy, backend: str) -> None:
    # /proc refuses new folders even to root, which ignores permission bits.
    environment = {"LAZY_STORAGE": backend, "LAZY_DATA": "/proc/lazy-memory-test"}

    refused = lazy("memory", "save", "a", "-t", "user", "-d", "d", environment=environment)

    assert_one_line_error(refused, 7, "/proc/lazy-memory-test")


@pytest.fixture
def mounted_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data directory on its own small tmpfs, so a test can remount it read-only.

    Root writes through permission bits, so only a read-only mount really refuses it.
    """
    with small_tmpfs(tmp_path / "mounted", "8m") as mount_point:
        monkeypatch.setenv("LAZY_DATA", str(mount_point))
        yield mount_point


@pytest.mark.parametrize("backend", ["sqlite", "files"])
def test_a_read_only_store_refuses_writes_and_recovers(
    lazy: Lazy, backend: str, mounted_data_dir: Path
) -> None:
    environment = {"LAZY_STORAGE": backend}
    lazy("memory", "save", "a", "-t", "user", "-d", "d", "--body", "b", environment=environment)
    remount(mounted_data_dir, "ro")
    try:
        refused = lazy("memory", "save", "b", "-t", "user", "-d", "d", environment=environment)
    finally:
        remount(mounted_data_dir, "rw")

    assert_one_line_error(refused, 7, str(mounted_data_dir))
    assert (
        lazy("memory", "save", "b", "-t", "user", "-d", "d", environment=environment).returncode
        == 0
    )
    listed = json.loads(lazy("memory", "list", "--json", environment=environment).stdout)
    assert [record["name"] for record in listed] == ["a", "b"]


def test_a_bad_config_file_is_one_line(lazy: Lazy, project: Path) -> None:
    (project / "lazy.toml").write_text("[storage\nbackend = 1\n")

    assert_one_line_error(lazy("memory", "list"), 4, "lazy.toml is not valid TOML")


def test_an_unknown_backend_names_the_known_ones(lazy: Lazy) -> None:
    listed = lazy("memory", "list", environment={"LAZY_STORAGE": "mongo"})

    assert_one_line_error(listed, 4, "unknown storage backend 'mongo': use one of sqlite, files")


def test_debug_shows_the_traceback(lazy: Lazy) -> None:
    shown = lazy("memory", "show", "ghost", "--debug")

    assert shown.returncode == 3
    assert "Traceback (most recent call last)" in shown.stderr
    assert shown.stderr.endswith("lazy: error: no record named 'ghost'\n")
