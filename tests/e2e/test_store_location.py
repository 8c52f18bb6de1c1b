"""Where the store is: the command that starts it says so (and warns outside any project), and
a command that reads, or a write that writes nothing, starts none."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import lazy_in

WARNING = (
    "lazy: warning: started a new store in {data}: no git repository or lazy.toml was found in "
    "{root} or above it, so this folder is the project's root. To keep the store with a project, "
    "run lazy inside it (`lazy init` makes a folder one), or set LAZY_DATA\n"
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder in no project (no .git or lazy.toml in it or above), the store in its default
    place."""
    monkeypatch.delenv("LAZY_DATA")
    assert not any((d / ".git").exists() or (d / "lazy.toml").exists() for d in tmp_path.parents)
    folder = tmp_path / "notes"
    folder.mkdir()
    return folder


def run(folder: Path, *arguments: str, backend: str = "sqlite") -> subprocess.CompletedProcess[str]:
    """`lazy ARGS` in folder on backend, standard input closed off."""
    return lazy_in(folder, *arguments, LAZY_STORAGE=backend)


@pytest.mark.parametrize("backend", ["sqlite", "files"])
def test_a_save_outside_any_project_says_where_it_started_the_store(
    folder: Path, backend: str
) -> None:
    first = run(folder, "memory", "save", "n", "-t", "user", "-d", "d", backend=backend)
    second = run(folder, "memory", "save", "m", "-t", "user", "-d", "d", backend=backend)

    assert (first.returncode, first.stdout) == (0, "created n (user), revision 1\n")
    assert first.stderr == WARNING.format(data=folder / ".lazy", root=folder)
    assert (second.returncode, second.stderr) == (0, ""), "said once: when it is started"


def test_under_json_the_warning_is_a_json_object(folder: Path) -> None:
    saved = run(folder, "memory", "save", "n", "-t", "user", "-d", "d", "--json")

    assert json.loads(saved.stdout)["name"] == "n"
    message = WARNING.format(data=folder / ".lazy", root=folder).removeprefix("lazy: warning: ")
    assert json.loads(saved.stderr) == {"warning": {"message": message.rstrip("\n")}}


def test_in_a_project_the_first_save_names_the_store_it_started(folder: Path) -> None:
    (folder / ".git").mkdir()
    inside = folder / "src" / "deep"
    inside.mkdir(parents=True)

    first = run(inside, "memory", "save", "n", "-t", "user", "-d", "d")
    second = run(inside, "memory", "save", "m", "-t", "user", "-d", "d")

    assert first.stderr == f"lazy: started a new store in {folder / '.lazy'}\n"
    assert second.stderr == ""


@pytest.mark.parametrize("backend", ["sqlite", "files"])
@pytest.mark.parametrize(
    "arguments",
    [
        ["memory", "list"],
        ["memory", "show", "n"],
        ["memory", "history"],
        ["memory", "history", "n"],
        ["memory", "context"],
        ["search", "n"],
        ["doctor"],
        ["memory", "rm", "n"],
        ["memory", "save", "n", "-t", "user", "-d", "d", "--if-revision", "3"],
        ["memory", "save", "a/b", "-t", "user", "-d", "d"],
        ["memory", "compact"],
        ["memory", "compact", "--clear"],
    ],
)
def test_reading_or_a_write_that_writes_nothing_starts_no_store(
    folder: Path, backend: str, arguments: list[str]
) -> None:
    done = run(folder, *arguments, backend=backend)

    assert "Traceback" not in done.stderr
    assert list(folder.iterdir()) == [], (arguments, done.stderr)
