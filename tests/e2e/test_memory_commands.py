"""`lazy memory` as a user types it: the record story, output formats, and body sources."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lazy_memory.rpc.cli.table import display_width
from tests.e2e.conftest import Lazy
from tests.support.components import require_program

SCRIPT_GIVES_A_TTY = "its `script` gives the test a terminal"


@pytest.fixture(params=["sqlite", "files"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each story runs on every embedded backend."""
    monkeypatch.setenv("LAZY_STORAGE", request.param)
    return str(request.param)


def test_save_list_show_update_rm_revive_history(lazy: Lazy, backend: str) -> None:
    created = lazy(
        "memory", "save", "deploy-steps", "-t", "project", "-d", "How we deploy", "--body", "make"
    )
    assert created.returncode == 0, created.stderr
    assert created.stdout == "created deploy-steps (project), revision 1\n"

    listing = lazy("memory", "list")
    assert listing.stdout.splitlines() == [
        "NAME          TYPE     DESCRIPTION",
        "deploy-steps  project  How we deploy",
    ]

    updated = lazy("memory", "save", "deploy-steps", "-d", "How we deploy to staging")
    assert updated.stdout == "updated deploy-steps (project), revision 2\n"
    shown = lazy("memory", "show", "deploy-steps")
    assert "description: How we deploy to staging\n" in shown.stdout
    assert "revision:    2\n" in shown.stdout
    assert shown.stdout.endswith("\nmake\n"), "an update without a body keeps the body"

    removed = lazy("memory", "rm", "deploy-steps")
    assert removed.returncode == 0
    assert "removed deploy-steps (revision 3)" in removed.stdout
    assert lazy("memory", "list").stdout == ""
    for command in ("show", "rm"):
        gone = lazy("memory", command, "deploy-steps")
        assert (gone.returncode, gone.stderr) == (
            3,
            "lazy: error: no live record named 'deploy-steps': it was removed at revision 3; a "
            "save of that name revives it, keeping what the save leaves out from before the "
            "removal\n",
        )
    assert json.loads(lazy("memory", "show", "deploy-steps", "--json").stderr)["error"]["data"] == {
        "removed_revision": 3
    }

    revived = lazy("memory", "save", "deploy-steps", "-t", "reference", "-d", "Back", "--body", "b")
    assert revived.stdout == "revived deploy-steps (reference), revision 4\n"

    history = json.loads(lazy("memory", "history", "deploy-steps", "--json").stdout)
    assert [(e["revision"], e["operation"]) for e in history] == [
        (1, "save"),
        (2, "save"),
        (3, "rm"),
        (4, "save"),
    ]
    assert {e["actor"]["kind"] for e in history} == {"human"}
    assert all(e["actor"]["detail"] for e in history)
    table = lazy("memory", "history").stdout.splitlines()
    assert table[0].split() == ["WHEN", "(UTC)", "NAME", "REV", "OP", "WHO", "DESCRIPTION"]
    assert len(table) == 5
    assert " rm " in table[3]


def test_every_command_speaks_json(lazy: Lazy) -> None:
    saved = json.loads(
        lazy("memory", "save", "a", "-t", "user", "-d", "d", "--body", "b", "--json").stdout
    )
    assert {k: saved[k] for k in ("name", "type", "description", "body", "revision")} == {
        "name": "a",
        "type": "user",
        "description": "d",
        "body": "b",
        "revision": 1,
    }
    assert saved["updated_by"]["kind"] == "human"
    assert json.loads(lazy("memory", "list", "--json").stdout)[0]["name"] == "a"
    assert json.loads(lazy("memory", "show", "a", "--json").stdout)["body"] == "b"
    assert json.loads(lazy("memory", "rm", "a", "--json").stdout)["operation"] == "rm"
    assert len(json.loads(lazy("memory", "history", "--json").stdout)) == 2
    assert json.loads(lazy("memory", "list", "--json").stdout) == []


def test_list_elides_long_descriptions_to_120_columns_when_piped(lazy: Lazy) -> None:
    long = "word " * 39 + "end"  # 198 characters
    lazy("memory", "save", "long-one", "-t", "project", "-d", long)
    lazy("memory", "save", "short-one", "-t", "user", "-d", "short")

    lines = lazy("memory", "list").stdout.splitlines()

    assert max(len(line) for line in lines) == 120
    assert lines[1].endswith("…")
    assert lines[2].endswith("short")
    assert lines[-1] == (
        "(1 description shortened with … to fit 120 columns; "
        "`lazy memory show NAME` prints it in full)"
    )
    shown = lazy("memory", "show", "long-one").stdout
    assert f"description: {long}\n" in shown
    assert json.loads(lazy("memory", "show", "long-one", "--json").stdout)["description"] == long


def test_index_collapses_whitespace_and_show_keeps_it(lazy: Lazy) -> None:
    description = "tabs\tand   spaces  kept"
    lazy("memory", "save", "spacing", "-t", "project", "-d", description)

    assert lazy("memory", "list").stdout.splitlines()[1].endswith("tabs and spaces kept")
    # Spaces are kept; a tab, like every control character in a one-line field, is escaped.
    assert "description: tabs\\tand   spaces  kept\n" in lazy("memory", "show", "spacing").stdout
    shown = json.loads(lazy("memory", "show", "spacing", "--json").stdout)
    assert shown["description"] == description


def test_body_from_file_and_from_standard_input(lazy: Lazy, tmp_path: Path) -> None:
    body_file = tmp_path / "body.md"
    body_file.write_text("# From a file\n\nwith *markdown*\n", encoding="utf-8")

    lazy("memory", "save", "filed", "-t", "project", "-d", "d", "--body-file", str(body_file))
    lazy("memory", "save", "piped", "-t", "project", "-d", "d", "--body-file", "-", input="🧠\n")
    refused = lazy("memory", "save", "unasked", "-t", "project", "-d", "d", input="not read")

    def body(name: str) -> str:
        return str(json.loads(lazy("memory", "show", name, "--json").stdout)["body"])

    assert body("filed") == "# From a file\n\nwith *markdown*\n"
    assert body("piped") == "🧠\n"
    assert refused.returncode == 2, "standard input is read only with --body-file -"
    assert "add --body-file - to save it as the body" in refused.stderr
    assert lazy("memory", "show", "unasked").returncode == 3
    missing = lazy("memory", "save", "y", "-t", "user", "-d", "d", "--body-file", "/nonexistent")
    assert (missing.returncode, missing.stderr.count("\n")) == (2, 1)
    assert "cannot read --body-file /nonexistent" in missing.stderr


def test_body_that_is_not_utf8_is_refused(lazy: Lazy, project: Path) -> None:
    (project / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))

    refused = lazy("memory", "save", "c", "-t", "user", "-d", "d", "--body-file", "latin1.txt")

    assert refused.returncode == 4
    assert refused.stderr == "lazy: error: the body from latin1.txt is not valid UTF-8 (byte 3)\n"
    assert lazy("memory", "list", "--json").stdout.strip() == "[]"


def in_terminal(
    command: str, project: Path, **environment: str
) -> subprocess.CompletedProcess[str]:
    """Run a shell command with a real terminal (util-linux `script`) as its stdin and stdout."""
    return subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        cwd=project,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_list_elides_to_the_terminal_width(lazy: Lazy, project: Path) -> None:
    require_program("script", "util-linux", SCRIPT_GIVES_A_TTY)
    lazy("memory", "save", "wide", "-t", "project", "-d", "a description of some length " * 4)

    shown = in_terminal("stty cols 60; python -m lazy_memory.rpc.cli memory list", project)

    lines = shown.stdout.replace("\r\n", "\n").splitlines()
    assert lines[1].startswith("wide  project  a description")
    assert len(lines[1]) == 60
    assert lines[1].endswith("…")
    assert "to fit 60 columns" in " ".join(lines[3:])


def appending_editor(folder: Path, line: str) -> Path:
    """An $EDITOR that appends line (and a line break) to the file it is given."""
    editor = folder / "editor.sh"
    editor.write_text(f'#!/bin/sh\nprintf "%s\\n" "{line}" >> "$1"\n')
    editor.chmod(0o755)
    return editor


@pytest.mark.parametrize("where", ["COLUMNS in a pipe", "a terminal"])
def test_list_fits_the_width_it_claims(lazy: Lazy, project: Path, where: str) -> None:
    # At 40 columns `list` printed 54-column rows under a footer that said it fit 40.
    lazy("memory", "save", "release-checklist-for-mobile", "-t", "reference", "-d", "Every step")
    lazy("memory", "save", "deploy-steps", "-t", "project", "-d", "How we deploy, step by step")

    if where == "a terminal":
        require_program("script", "util-linux", SCRIPT_GIVES_A_TTY)
        shown = in_terminal("stty cols 40; python -m lazy_memory.rpc.cli memory list", project)
        printed = shown.stdout.replace("\r\n", "\n")
    else:
        printed = lazy("memory", "list", environment={"COLUMNS": "40"}).stdout

    lines = printed.splitlines()
    assert max(display_width(line) for line in lines) == 40, printed
    assert lines[:3] == [
        "NAME               TYPE       DESCRIPTI…",
        "deploy-steps       project    How we de…",
        "release-checklis…  reference  Every step",
    ]
    assert " ".join(lines[4:]) == (
        "(1 name and 1 description shortened with … to fit 40 columns; `lazy memory list "
        "--json` prints every name whole, `lazy memory show NAME` a record in full)"
    )


def test_editor_opens_on_the_current_body_in_a_terminal(
    lazy: Lazy, project: Path, tmp_path: Path
) -> None:
    require_program("script", "util-linux", SCRIPT_GIVES_A_TTY)
    lazy("memory", "save", "edited", "-t", "project", "-d", "d", "--body", "first line")
    editor = appending_editor(tmp_path, "-- seen by editor")

    # With a terminal on stdin, save falls through to $EDITOR.
    command = "python -m lazy_memory.rpc.cli memory save edited"
    finished = in_terminal(command, project, EDITOR=str(editor), VISUAL="")

    assert finished.returncode == 0, finished.stdout + finished.stderr
    body = json.loads(lazy("memory", "show", "edited", "--json").stdout)["body"]
    assert body == "first line-- seen by editor\n"


def test_reviving_in_a_terminal_opens_the_editor_on_the_removed_body(
    lazy: Lazy, project: Path, tmp_path: Path
) -> None:
    require_program("script", "util-linux", SCRIPT_GIVES_A_TTY)
    lazy("memory", "save", "gone", "-t", "project", "-d", "d", "--body", "the last body")
    lazy("memory", "rm", "gone")
    editor = appending_editor(tmp_path, " and more")

    command = "python -m lazy_memory.rpc.cli memory save gone"
    finished = in_terminal(command, project, EDITOR=str(editor), VISUAL="")

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "revived gone (project), revision 3" in finished.stdout
    body = json.loads(lazy("memory", "show", "gone", "--json").stdout)["body"]
    assert body == "the last body and more\n"


def test_the_lazy_command_is_installed_and_reports_its_version() -> None:
    executable = shutil.which("lazy")
    assert executable is not None, "`pip install -e .` puts `lazy` on PATH"

    finished = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=60)

    assert finished.returncode == 0
    assert finished.stdout.startswith("lazy ")
