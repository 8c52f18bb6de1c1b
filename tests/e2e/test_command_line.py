"""The `lazy` command line as a newcomer meets it: help where a command is missing, a usage
error in the words of the command it was given to, and errors under `--json` as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy


@pytest.mark.parametrize(
    ("words", "usage", "lists"),
    [
        ((), "usage: lazy [-h]", ["memory", "search", "init", "doctor"]),
        (("memory",), "usage: lazy memory [-h]", ["list", "show", "save", "rm", "history"]),
        (("engine", "token"), "usage: lazy engine token [-h]", ["add", "list", "revoke"]),
    ],
)
def test_a_command_group_without_its_command_prints_its_help(
    lazy: Lazy, words: tuple[str, ...], usage: str, lists: list[str]
) -> None:
    shown = lazy(*words)

    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout.startswith(usage)
    commands = shown.stdout.split("commands:", 1)[1]
    assert all(f"\n    {command} " in commands for command in lists), shown.stdout
    assert shown.stdout == lazy(*words, "--help").stdout


@pytest.mark.parametrize(
    ("words", "command", "said"),
    [
        (("memory", "list", "--bogus"), "lazy memory list", "unrecognized arguments: --bogus"),
        (("memory", "show", "a", "b"), "lazy memory show", "unrecognized arguments: b"),
        (
            ("engine", "token", "add", "--role", "builder", "--bogus"),
            "lazy engine token add",
            "unrecognized arguments: --bogus",
        ),
        (("memory", "save"), "lazy memory save", "the following arguments are required: name"),
        (("--bogus", "memory", "list"), "lazy", "unrecognized arguments: --bogus"),
    ],
)
def test_an_argument_error_shows_the_usage_of_the_command_it_was_given_to(
    lazy: Lazy, words: tuple[str, ...], command: str, said: str
) -> None:
    refused = lazy(*words)

    assert (refused.returncode, refused.stdout) == (2, "")
    usage, _, error = refused.stderr.partition(f"\n{command}: error: ")
    assert usage.startswith(f"usage: {command} [-h]"), refused.stderr
    assert error == f"{said}\n"


def json_error(stderr: str) -> dict[str, object]:
    """The one JSON object a failed command wrote to standard error, as its only line."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    reported = json.loads(lines[0])
    assert list(reported) == ["error"]
    error = reported["error"]
    assert isinstance(error, dict)
    assert list(error) == ["type", "message", "exit_status", "data"]
    return error


SAVE = ("memory", "save")
AGENT = {"LAZY_TASK_ID": "t-1"}
FAILURES = {
    "NotFound": (("memory", "show", "nothing"), {}, 3, "no record named 'nothing'"),
    "InvalidRecord": ((*SAVE, "a/b", "-t", "user", "-d", "d"), {}, 4, "a/b"),
    "Conflict": ((*SAVE, "c", "-d", "e", "--if-revision", "4"), {}, 5, "not 4"),
    "PermissionDenied": ((*SAVE, "a", "-t", "user", "-d", "d"), AGENT, 6, "read-only"),
    "InvalidQuery": (("search", '"unclosed'), {}, 4, "the quote is never closed"),
    "UsageError": ((*SAVE, "a", "--body-file", "/nonexistent"), {}, 2, "cannot read"),
    "argparse": (("memory", "list", "--bogus"), {}, 2, "unrecognized arguments: --bogus"),
}


@pytest.mark.parametrize("case", FAILURES)
def test_under_json_an_error_is_one_json_object_on_standard_error(lazy: Lazy, case: str) -> None:
    words, environment, status, said = FAILURES[case]
    lazy("memory", "save", "c", "-t", "user", "-d", "d")

    failed = lazy(*words, "--json", environment=environment)
    plain = lazy(*words, environment=environment)

    error = json_error(failed.stderr)
    assert (failed.returncode, failed.stdout) == (status, "")
    assert (error["type"], error["exit_status"]) == (case.replace("argparse", "UsageError"), status)
    assert said in str(error["message"])
    assert (plain.returncode, plain.stdout) == (status, "")
    assert said in plain.stderr
    assert not plain.stderr.startswith("{")


def test_a_usage_error_under_json_carries_the_commands_usage(lazy: Lazy) -> None:
    error = json_error(lazy("memory", "list", "--bogus", "--json").stderr)

    assert error["message"] == "lazy memory list: unrecognized arguments: --bogus"
    assert error["data"] == {"usage": "usage: lazy memory list [-h] [--json] [--debug]"}


def test_under_json_a_warning_is_a_json_object_too(lazy: Lazy, project: Path) -> None:
    (project / "lazy.toml").write_text("[storage]\nbogus = 1\n")

    listed = lazy("memory", "list", "--json")
    failed = lazy("memory", "show", "nothing", "--json")

    assert (listed.returncode, json.loads(listed.stdout)) == (0, [])
    warning = {
        "warning": {"message": f"{project / 'lazy.toml'}: ignoring unknown key storage.bogus"}
    }
    assert [json.loads(line) for line in listed.stderr.splitlines()] == [warning]
    first, second = failed.stderr.splitlines()
    assert json.loads(first) == warning
    assert json.loads(second)["error"]["type"] == "NotFound"


def test_a_count_of_one_is_singular(lazy: Lazy) -> None:
    lazy("memory", "save", "only", "-t", "user", "-d", "the one record")

    doctor = lazy("doctor").stdout

    assert "bytes for 1 record (advisory size" in doctor
    assert "A hook launch shows 1 of 1 record inline" in doctor
    assert "1 records" not in doctor
