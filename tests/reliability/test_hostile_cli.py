"""Hostile input (issue #11, part 3): command-line arguments that are not UTF-8.

Each `lazy` command given bytes that are not UTF-8 as a name, a description or a query gets a
typed error: its exit status, one line on stderr, nothing on stdout.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reliability.hostile import process_environment
from tests.reliability.live_engine import LAZY


@pytest.mark.parametrize(
    ("arguments", "status"),
    [
        (["memory", "show", b"\xff"], 3),
        (["memory", "rm", b"\xff"], 3),
        (["memory", "save", b"\xff", "-t", "user", "-d", "d", "--body", "b"], 4),
        (["memory", "save", "ok", "-t", "user", "-d", b"caf\xe9", "--body", "b"], 4),
        (["search", b"\xff\xfe"], 4),
        (["search", b"name:\xff"], 4),
    ],
    ids=["show", "rm", "save-name", "save-description", "search", "search-name"],
)
def test_command_line_arguments_that_are_not_utf8_get_a_typed_error(
    workspace: Path, tmp_path: Path, arguments: list[str | bytes], status: int
) -> None:
    done = subprocess.run(
        [*LAZY, *arguments],
        env=process_environment(workspace, tmp_path / "data"),
        cwd=workspace / "project",
        capture_output=True,
        timeout=60,
    )

    assert done.returncode == status, done.stderr
    assert done.stderr.count(b"\n") == 1
    assert done.stdout == b""
