"""One record a backend cannot read, through the real `lazy` command and `lazy engine`
(issue 30): on SQLite, files and PostgreSQL, nothing exits 70.

`list` and `search` print every record they can read and name the others in one line on
standard error, exit 7 (StorageUnavailable, as a script must notice); `show` of that record is
the typed error naming it and why, `show` of another is as ever; doctor lists it and exits 14
(repair); the launch section lists the others and names it in one line. Over JSON-RPC the
index recall lists the others beside it, and a named recall of it is -32014 naming it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.support.jsonrpc import RawClient
from tests.support.postgres import PostgresServer, fresh_project
from tests.support.unreadable_rows import REASONS, damage_files, damage_postgres, damage_sqlite

READABLE = ["alpha", "zeta"]
REASON = REASONS["type"]
NOTE = "1 memory record could not be read: 'broken'; `lazy doctor` says why"
SECTION_LINE = f"({NOTE})\n"
UNREADABLE = [{"name": "broken", "reason": REASON}]
STORAGE_UNAVAILABLE = (7, -32014)


@pytest.fixture(params=["sqlite", "files", "postgres"])
async def environment(
    request: pytest.FixtureRequest, lazy: Lazy, isolated_environment: Path
) -> dict[str, str]:
    """A store of the backend holding alpha, broken and zeta ("shared" in each body), broken
    then given a type that is not one of the four, behind the store's back."""
    backend = str(request.param)
    environment = {"LAZY_STORAGE": backend}
    if backend == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        environment |= {"LAZY_PG_DSN": server.dsn, "LAZY_PROJECT": fresh_project("rows")}
    for name in ("alpha", "broken", "zeta"):
        saved = lazy(
            "memory", "save", name, "-t", "project", "-d", f"{name} note", "--body", "shared",
            environment=environment,
        )  # fmt: skip
        assert saved.returncode == 0, saved.stderr
    if backend == "sqlite":
        damage_sqlite(isolated_environment / "memory.db", "broken", "type")
    elif backend == "files":
        damage_files(isolated_environment, "broken", "type")
    else:
        await damage_postgres(server.dsn, environment["LAZY_PROJECT"], "broken", "type")
    return environment


def test_list_and_search_print_the_others_and_name_it_on_stderr_with_exit_7(
    lazy: Lazy, environment: dict[str, str]
) -> None:
    listed = lazy("memory", "list", environment=environment)
    searched = lazy("search", "shared", environment=environment)

    for done in (listed, searched):
        assert done.returncode == 7, done.stderr
        assert done.stderr == f"lazy: error: {NOTE}\n"
        assert "broken" not in done.stdout
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == READABLE
    assert searched.stdout.splitlines()[::2] == [
        "alpha (project): alpha note",
        "zeta (project): zeta note",
    ]


def test_a_save_of_every_field_says_it_replaced_it_and_one_of_some_fails_on_it(
    lazy: Lazy, environment: dict[str, str]
) -> None:
    partial = lazy("memory", "save", "broken", "-d", "mended", environment=environment)
    replaced = lazy(
        "memory", "save", "broken", "-t", "user", "-d", "mended", "--body", "new",
        environment=environment,
    )  # fmt: skip

    assert partial.returncode == 7, partial.stderr
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.startswith("replaced the unreadable record broken (user), revision ")


def test_their_json_is_the_others_and_one_error_object_naming_it(
    lazy: Lazy, environment: dict[str, str]
) -> None:
    listed = lazy("memory", "list", "--json", environment=environment)
    searched = lazy("search", "--json", "shared", environment=environment)

    for done in (listed, searched):
        assert done.returncode == 7
        assert [item["name"] for item in json.loads(done.stdout)] == READABLE
        error = json.loads(done.stderr)["error"]
        assert error["type"] == "StorageUnavailable"
        assert (error["exit_status"], error["data"]) == (7, {"unreadable": UNREADABLE})


def test_show_of_it_is_the_typed_error_naming_it_and_show_of_another_works(
    lazy: Lazy, environment: dict[str, str]
) -> None:
    broken = lazy("memory", "show", "broken", environment=environment)
    broken_json = lazy("memory", "show", "broken", "--json", environment=environment)
    alpha = lazy("memory", "show", "alpha", environment=environment)
    alpha_json = lazy("memory", "show", "alpha", "--json", environment=environment)

    assert broken.returncode == 7
    assert broken.stderr.startswith("lazy: error: ")
    assert broken.stderr.endswith(f"holds a record it cannot read: 'broken' ({REASON})\n")
    assert len(broken.stderr.splitlines()) == 1
    assert broken_json.returncode == 7
    assert json.loads(broken_json.stderr)["error"]["data"] == {"unreadable": UNREADABLE}
    assert alpha.returncode == alpha_json.returncode == 0
    assert "description: alpha note" in alpha.stdout
    assert json.loads(alpha_json.stdout)["name"] == "alpha"


def test_doctor_lists_it_with_why_and_exits_14(lazy: Lazy, environment: dict[str, str]) -> None:
    doctor = lazy("doctor", environment=environment)
    doctor_json = lazy("doctor", "--json", environment=environment)

    assert doctor.returncode == doctor_json.returncode == 14, doctor.stderr
    assert (
        "Unreadable: 1 record the store holds but cannot read:\n"
        f"  'broken': {REASON}\n"
        "The store holds a record it cannot read (listed above)."
    ) in doctor.stdout
    diagnosis = json.loads(doctor_json.stdout)
    assert diagnosis["remedy"] == "repair"
    assert diagnosis["unreadable"] == UNREADABLE
    assert diagnosis["record_count"] == len(READABLE)


def test_the_launch_section_lists_the_others_and_names_it(
    lazy: Lazy, environment: dict[str, str]
) -> None:
    hook = lazy("memory", "context", "--hook", environment=environment)
    context = lazy("memory", "context", environment=environment)

    for done in (hook, context):
        assert done.returncode == 0, done.stderr
        assert f"- alpha (project): alpha note\n- zeta (project): zeta note\n{SECTION_LINE}" in (
            done.stdout
        )
        assert "UNAVAILABLE" not in done.stdout


async def test_the_engine_s_recall_lists_the_others_and_a_named_recall_names_it(
    environment: dict[str, str], tmp_path: Path, project: Path
) -> None:
    engine = await RawClient.spawn(
        ["engine"], {**os.environ, **environment}, tmp_path / "engine.log", cwd=project
    )
    try:
        assert "result" in await engine.initialize()
        index = await engine.request("lazy/memory/recall")
        paged = await engine.request("lazy/memory/recall", {"page": 1})
        named = await engine.request("lazy/memory/recall", {"name": "broken"})
        assert await engine.close() == 0
    finally:
        await engine.kill()

    for answer in (index, paged):
        assert [entry["name"] for entry in answer["result"]["records"]] == READABLE
        assert answer["result"]["unreadable"] == UNREADABLE
        assert "marker" not in answer["result"]
    assert named["error"]["code"] == STORAGE_UNAVAILABLE[1]
    assert named["error"]["data"] == {"type": "StorageUnavailable", "unreadable": UNREADABLE}
    assert f"'broken' ({REASON})" in named["error"]["message"]
