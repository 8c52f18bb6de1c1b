"""`lazy search` as a user types it: plain when piped, coloured in a terminal, JSON, errors."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy

RECORDS = (
    ("deploy-steps", "project", "How we deploy", "First run the tests.\nThen make deploy."),
    ("deploy-style", "feedback", "Deploy only from main", "Never deploy a branch."),
    ("redis-cache", "reference", "Where the redis cache lives", "redis.internal:6379"),
)


@pytest.fixture(params=["sqlite", "files"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each command runs on every embedded backend."""
    monkeypatch.setenv("LAZY_STORAGE", request.param)
    return str(request.param)


@pytest.fixture
def saved(lazy: Lazy, backend: str) -> None:
    """The project's store holds RECORDS."""
    for name, type, description, body in RECORDS:
        done = lazy("memory", "save", name, "-t", type, "-d", description, "--body", body)
        assert done.returncode == 0, done.stderr


def test_piped_output_is_an_index_line_and_a_marked_snippet_per_hit(
    lazy: Lazy, saved: None
) -> None:
    done = lazy("search", 'in:memories "make deploy"')

    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "deploy-steps (project): How we deploy\n    First run the tests. Then «make deploy».\n"
    )
    assert done.stderr == ""


def test_the_words_of_the_query_may_come_as_several_arguments(lazy: Lazy, saved: None) -> None:
    quoted = lazy("search", "deploy -branch type:project")
    unquoted = lazy("search", "--", "deploy", "-branch", "type:project")

    assert quoted.returncode == 0, quoted.stderr
    assert quoted.stdout.splitlines()[0] == "deploy-steps (project): How we deploy"
    assert len(quoted.stdout.splitlines()) == 2
    assert unquoted.stdout == quoted.stdout


def test_json_and_limit(lazy: Lazy, saved: None) -> None:
    everything = json.loads(lazy("search", "deploy", "--json").stdout)
    limited = json.loads(lazy("search", "deploy", "--json", "--limit", "1").stdout)

    assert [hit["name"] for hit in everything] == ["deploy-style", "deploy-steps"]
    assert set(everything[0]) == {"name", "type", "description", "snippet", "score"}
    assert everything[0]["score"] > everything[1]["score"] > 0
    assert "«deploy»" in everything[0]["snippet"].lower()
    assert limited == everything[:1]


def test_no_hits_print_nothing_and_say_so_on_stderr(lazy: Lazy, saved: None) -> None:
    done = lazy("search", "giraffe")
    as_json = lazy("search", "giraffe", "--json")

    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "No live record matches giraffe\n"
    assert (as_json.returncode, json.loads(as_json.stdout), as_json.stderr) == (0, [], "")


def test_a_bad_query_is_one_line_and_exit_status_4(lazy: Lazy, saved: None) -> None:
    done = lazy("search", 'deploy "make deploy')

    assert done.returncode == 4
    assert done.stdout == ""
    assert done.stderr == (
        'lazy: error: invalid query: `"make deploy` at column 8: the quote is never closed: '
        'add a " at its end\n'
    )
    unknown_scope = lazy("search", "in:notes deploy")
    assert unknown_scope.returncode == 4
    assert "the scopes there are: memories" in unknown_scope.stderr


@pytest.mark.parametrize("limit", ["0", "201", "many"])
def test_a_limit_out_of_range_is_a_usage_error(lazy: Lazy, limit: str) -> None:
    done = lazy("search", "deploy", "--limit", limit)

    assert done.returncode == 2
    assert "--limit" in done.stderr
    assert "1 to 200" in done.stderr


def test_matches_are_coloured_in_a_terminal_only(project: Path, saved: None) -> None:
    def in_terminal(**environment: str) -> str:
        controller, terminal = pty.openpty()
        try:
            subprocess.run(
                [sys.executable, "-m", "lazy_memory.rpc.cli", "search", "redis"],
                cwd=project,
                stdin=subprocess.DEVNULL,
                stdout=terminal,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **environment},
                timeout=60,
                check=True,
            )
            return os.read(controller, 65536).decode("utf-8")
        finally:
            os.close(controller)
            os.close(terminal)

    coloured = in_terminal()
    plain = in_terminal(NO_COLOR="1")

    assert "\x1b[1;31mredis\x1b[0m" in coloured
    assert "«" not in coloured
    assert "«redis»" in plain
    assert "\x1b[" not in plain
