"""`lazy init`'s storage options, the project key it writes, and a git status left clean."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.conftest import lazy_in as run
from tests.support.daemon import add_token, running_daemon
from tests.support.postgres import PostgresServer

_databases = iter(range(1, 1000))


def git(root: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *arguments], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def repository(path: Path, remote: str | None = None) -> Path:
    """A real git repository at path, with an origin remote if given."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    if remote is not None:
        git(path, "remote", "add", "origin", remote)
    return path


def untracked(root: Path) -> list[str]:
    """What `git status` shows, every untracked file listed by itself."""
    return git(root, "status", "--porcelain", "--untracked-files=all").splitlines()


@pytest.fixture
def in_project_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store in its default place, <root>/.lazy, rather than the test's LAZY_DATA."""
    monkeypatch.delenv("LAZY_DATA")


@pytest.fixture
def database(postgres_server: PostgresServer) -> str:
    """A database of this test's own: whatever key two checkouts get, no other test shares it."""
    return postgres_server.create_database(f"init_{os.getpid()}_{next(_databases)}")


@pytest.mark.usefixtures("in_project_data")
def test_init_and_saves_leave_git_status_clean_but_for_lazy_toml(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")

    initialized = run(root, "init", "--non-interactive")
    assert initialized.returncode == 0, initialized.stderr
    assert untracked(root) == ["?? lazy.toml"]
    saved = run(root, "memory", "save", "n", "-t", "user", "-d", "d", "--body", "b")
    assert saved.returncode == 0, saved.stderr

    assert (root / ".lazy" / "memory.db").exists()
    assert untracked(root) == ["?? lazy.toml"]
    assert "Commit lazy.toml" in initialized.stdout


@pytest.mark.usefixtures("in_project_data")
@pytest.mark.parametrize("backend", ["sqlite", "files"])
def test_a_save_without_init_leaves_git_status_clean(tmp_path: Path, backend: str) -> None:
    root = repository(tmp_path / "repo")

    saved = run(root, "memory", "save", "n", "-t", "user", "-d", "d", LAZY_STORAGE=backend)
    assert saved.returncode == 0, saved.stderr
    token = run(root, "engine", "token", "add", "--role", "builder")
    assert token.returncode == 0, token.stderr

    assert untracked(root) == []
    assert (root / ".lazy" / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.usefixtures("in_project_data")
def test_the_first_token_creates_a_private_data_directory_git_ignores(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")

    assert run(root, "engine", "token", "add", "--role", "builder").returncode == 0

    assert stat.S_IMODE((root / ".lazy").stat().st_mode) == 0o700
    assert untracked(root) == []


@pytest.mark.usefixtures("in_project_data")
def test_init_adds_the_gitignore_to_a_data_directory_an_older_version_made(
    tmp_path: Path,
) -> None:
    root = repository(tmp_path / "repo")
    (root / ".lazy").mkdir()
    (root / ".lazy" / "memory.db").write_bytes(b"")
    assert untracked(root) == ["?? .lazy/memory.db"]

    reported = json.loads(run(root, "init", "--json").stdout)

    assert untracked(root) == ["?? lazy.toml"]
    assert {"path": str(root / ".lazy" / ".gitignore"), "status": "created"} in reported["files"]


def test_init_json_prints_one_json_object_with_the_storage_it_wrote(tmp_path: Path) -> None:
    root = repository(tmp_path / "app", "git@git.example.net:acme/app.git")

    printed = run(root, "init", "--json")

    assert printed.returncode == 0, printed.stderr
    reported = json.loads(printed.stdout)
    expected = {"backend": "sqlite", "project": "git.example.net/acme/app"}
    assert reported["storage"] == {**expected, "records": 0}
    assert {"path": str(root / "lazy.toml"), "status": "created"} in reported["files"]
    assert tomllib.loads((root / "lazy.toml").read_text())["storage"] == expected


def test_without_a_git_remote_init_writes_no_path_as_the_project_key_and_says_why(
    lazy: Lazy, project: Path
) -> None:
    # A path is this checkout's alone, and another machine's project may sit at the same one.
    printed = lazy("init", "--non-interactive")
    reported = json.loads(lazy("init", "--json").stdout)

    assert printed.returncode == 0, printed.stderr
    text = (project / "lazy.toml").read_text()
    assert tomllib.loads(text)["storage"] == {"backend": "sqlite"}
    assert str(project) not in text
    assert '# project = "your-team/project"' in text
    assert "the same in every checkout" not in text
    assert "Wrote {} (backend sqlite, no project key).".format(project / "lazy.toml") in (
        printed.stdout
    )
    assert (
        "lazy.toml names no [storage] project (only a postgres store uses one): the repository "
        f"has no git remote to take it from, and this checkout's path ({project}) is no key "
        "another checkout would share. Name the project under [storage] in lazy.toml, the same "
        'for the whole team (`project = "your-team/project"`), and commit it before the store '
        "is shared.\n"
    ) in printed.stdout
    assert reported["storage"] == {"backend": "sqlite", "project": None, "records": 0}


def test_init_with_postgres_and_no_git_remote_warns_of_the_checkouts_path(
    tmp_path: Path, database: str
) -> None:
    root = repository(tmp_path / "app")

    initialized = run(root, "init", "--dsn", database, "--non-interactive")
    doctor = run(root, "doctor")

    assert initialized.returncode == 0, initialized.stderr
    assert "lazy: warning: lazy.toml names no [storage] project: the repository" in (
        initialized.stderr
    )
    assert "project" not in tomllib.loads((root / "lazy.toml").read_text())["storage"]
    said = f"so this project's key in the postgres store is this checkout's path, '{root}'"
    assert said in doctor.stdout
    assert f'project = "{root}"' not in doctor.stdout, "a path is never advised as the key"


@pytest.mark.parametrize(
    ("saved", "said"), [(0, "no records yet"), (1, "1 record"), (2, "2 records")]
)
def test_init_says_what_the_store_holds(lazy: Lazy, project: Path, saved: int, said: str) -> None:
    for number in range(saved):
        lazy("memory", "save", f"n{number}", "-t", "user", "-d", "d")

    printed = lazy("init", "--non-interactive")
    reported = json.loads(lazy("init", "--json").stdout)

    assert printed.returncode == 0, printed.stderr
    data = project.parent / "lazy-data"  # the tests' LAZY_DATA
    first = ": the first save writes them there" if not saved else ""
    assert (
        f"The store in {data} holds {said}{first}; its .gitignore keeps its files out of git.\n"
    ) in printed.stdout
    assert "created by the first save" not in printed.stdout
    assert reported["storage"]["records"] == saved


def test_init_writes_a_postgres_configuration_keyed_by_the_git_remote(
    tmp_path: Path, database: str
) -> None:
    root = repository(tmp_path / "app", "https://ci:token@git.example.net/acme/app.git")

    initialized = run(root, "init", "--dsn", database, "--non-interactive")

    assert initialized.returncode == 0, initialized.stderr
    written = tomllib.loads((root / "lazy.toml").read_text())
    assert written["storage"] == {
        "backend": "postgres",
        "project": "git.example.net/acme/app",
        "pg_dsn": database,
    }
    assert "token" not in (root / "lazy.toml").read_text()
    doctor = run(root, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    assert json.loads(doctor.stdout)["warnings"] == []


def test_doctor_warns_when_the_postgres_project_key_is_guessed(
    tmp_path: Path, database: str
) -> None:
    root = repository(tmp_path / "app", "git@git.example.net:acme/app.git")
    (root / "lazy.toml").write_text(f'[storage]\nbackend = "postgres"\npg_dsn = "{database}"\n')

    doctor = run(root, "doctor")
    reported = json.loads(run(root, "doctor", "--json").stdout)

    assert doctor.returncode == 0, doctor.stderr
    assert "lazy.toml names no [storage] project" in doctor.stdout
    assert 'project = "git.example.net/acme/app"' in doctor.stdout
    assert len(reported["warnings"]) == 1
    again = run(root, "init", "--non-interactive")
    assert "lazy.toml names no [storage] project" in again.stderr, "init says so too"


def test_two_checkouts_that_share_a_folder_name_do_not_share_a_project(
    tmp_path: Path, database: str
) -> None:
    ours, theirs = tmp_path / "a" / "app", tmp_path / "b" / "app"
    for root in (ours, theirs):
        (root / ".git").mkdir(parents=True)
    shared = {"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": database}

    saved = run(ours, "memory", "save", "ours", "-t", "user", "-d", "d", **shared)
    listed = run(theirs, "memory", "list", "--json", **shared)

    assert saved.returncode == 0, saved.stderr
    assert json.loads(listed.stdout) == []


def test_two_checkouts_of_one_repository_share_its_project(tmp_path: Path, database: str) -> None:
    first = repository(tmp_path / "app", "git@git.example.net:acme/app.git")
    second = repository(tmp_path / "app-review", "https://git.example.net/acme/app")
    shared = {"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": database}

    run(first, "memory", "save", "shared", "-t", "user", "-d", "d", **shared)
    listed = run(second, "memory", "list", "--json", **shared)

    assert [record["name"] for record in json.loads(listed.stdout)] == ["shared"]


def test_init_writes_a_remote_configuration(tmp_path: Path, project: Path) -> None:
    daemon_data = tmp_path / "daemon"
    token = add_token(daemon_data, "engine")  # a lazy process using the daemon as its store
    socket = tmp_path / "s" / "lazy.sock"
    with running_daemon(daemon_data, f"unix:{socket}"):
        initialized = run(project, "init", "--remote", f"unix:{socket}", LAZY_TOKEN=token)

    assert initialized.returncode == 0, initialized.stderr
    written = tomllib.loads((project / "lazy.toml").read_text())
    assert written["storage"]["backend"] == "remote"
    assert written["remote"] == {"address": f"unix:{socket}"}
    assert token not in (project / "lazy.toml").read_text()


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--dsn", "postgresql://lazy:hunter2@db/memory"], "--dsn carries a password"),
        (["--dsn", "db.example.net"], "is not a PostgreSQL DSN"),
        (["--backend", "files", "--dsn", "postgresql://db/m"], "--dsn is for --backend postgres"),
        (["--dsn", "postgresql://db/m", "--remote", "unix:/s"], "give one"),
        (["--backend", "postgres"], "--backend postgres needs the database"),
        (["--remote", "http://host"], "use unix:PATH, tcp:HOST:PORT or tls:HOST:PORT"),
    ],
)
def test_contradictory_or_unsafe_storage_options_write_nothing(
    lazy: Lazy, project: Path, arguments: list[str], said: str
) -> None:
    refused = lazy("init", *arguments)

    assert refused.returncode in (2, 4)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert said in refused.stderr
    assert not (project / "lazy.toml").exists()


def test_init_never_rewrites_a_lazy_toml_its_options_contradict(lazy: Lazy, project: Path) -> None:
    assert lazy("init").returncode == 0
    before = (project / "lazy.toml").read_text()

    refused = lazy("init", "--dsn", "postgresql://db/memory")
    again = lazy("init", "--backend", "sqlite")

    assert refused.returncode == 2
    assert "says [storage] backend 'sqlite', not 'postgres'" in refused.stderr
    assert again.returncode == 0, "what it already says is no contradiction"
    assert (project / "lazy.toml").read_text() == before
