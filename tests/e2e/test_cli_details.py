"""The CLI's details: a save never waits on standard input unasked, the body flags exclude each
other, and a TLS daemon's refused certificate names the setting that supplies the CA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.daemon.raw_daemon import self_signed_certificate
from tests.support.daemon import add_token, running_daemon

LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]
PATIENCE_SECONDS = 30


def body(lazy: Lazy, name: str) -> str:
    return str(json.loads(lazy("memory", "show", name, "--json").stdout)["body"])


@pytest.mark.parametrize(
    "arguments",
    [
        ["memory", "save", "fresh", "-t", "user", "-d", "a new record, no body"],
        ["memory", "save", "kept", "-d", "only the description changes"],
    ],
)
def test_a_save_without_a_body_never_waits_on_an_open_standard_input(
    lazy: Lazy, project: Path, arguments: list[str]
) -> None:
    lazy("memory", "save", "kept", "-t", "user", "-d", "d", "--body", "the body")
    # An agent's shell, or a script run from one, hands its children a pipe it never closes.
    process = subprocess.Popen(
        [*LAZY, *arguments],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        status = process.wait(timeout=PATIENCE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"`lazy {' '.join(arguments)}` waited on standard input")
    finally:
        assert process.stdin is not None
        process.stdin.close()

    assert status == 0, process.stderr.read() if process.stderr else ""
    assert body(lazy, "kept") == "the body"
    assert body(lazy, arguments[2]) == ("" if arguments[2] == "fresh" else "the body")


def test_the_body_comes_from_standard_input_only_when_asked(lazy: Lazy) -> None:
    asked = lazy("memory", "save", "asked", "-t", "user", "-d", "d", "--body-file", "-", input="x")
    unasked = lazy("memory", "save", "asked", "-d", "e", input="never read")

    assert (asked.returncode, unasked.returncode) == (0, 2)
    assert body(lazy, "asked") == "x"


def waiting_text(kind: str, tmp_path: Path, text: bytes) -> tuple[int, Callable[[], bytes]]:
    """A descriptor for a save's standard input with text already waiting on it, and how to
    read back what the save left of it: a pipe still open for writing, or a file (`<`)."""
    if kind == "pipe":
        reader, writer = os.pipe()
        os.write(writer, text)

        def rest_of_pipe() -> bytes:
            os.close(writer)
            with os.fdopen(reader, "rb") as remaining:
                return remaining.read()

        return reader, rest_of_pipe
    (tmp_path / "notes.md").write_bytes(text)
    descriptor = os.open(tmp_path / "notes.md", os.O_RDONLY)

    def rest_of_file() -> bytes:
        with os.fdopen(descriptor, "rb") as remaining:  # from the offset the save left
            return remaining.read()

    return descriptor, rest_of_file


@pytest.mark.parametrize("kind", ["pipe", "file"])
@pytest.mark.parametrize("fields", [[], ["-d", "a new description"]])
def test_text_waiting_on_standard_input_unasked_is_refused_and_left_unread(
    lazy: Lazy, project: Path, tmp_path: Path, kind: str, fields: list[str]
) -> None:
    # `echo text | lazy memory save x` once printed "unchanged" and dropped the text.
    lazy("memory", "save", "kept", "-t", "user", "-d", "d", "--body", "the body")
    stdin, rest = waiting_text(kind, tmp_path, b"meant as the body\n")

    try:
        refused = subprocess.run(
            [*LAZY, "memory", "save", "kept", *fields],
            cwd=project,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        left = rest()

    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "lazy: error: standard input holds text, which a save reads only with --body-file -: "
        "add --body-file - to save it as the body, or redirect standard input from /dev/null "
        "to leave it unread; nothing was written\n"
    )
    assert left == b"meant as the body\n", "the text is left for whoever reads it next"
    shown = json.loads(lazy("memory", "show", "kept", "--json").stdout)
    assert (shown["revision"], shown["description"], shown["body"]) == (1, "d", "the body")


def test_body_and_body_file_together_are_a_usage_error_and_write_nothing(
    lazy: Lazy, project: Path
) -> None:
    (project / "body.md").write_text("from the file")

    both = lazy(
        "memory", "save", "n", "-t", "user", "-d", "d", "--body", "b", "--body-file", "body.md"
    )

    assert both.returncode == 2
    assert "--body-file: not allowed with argument --body" in both.stderr
    assert json.loads(lazy("memory", "list", "--json").stdout) == []


@pytest.mark.parametrize(
    ("host", "trusted", "said"),
    [
        ("localhost", False, "as [remote] ca_file in lazy.toml or LAZY_TLS_CA"),
        ("127.0.0.1", True, "name the daemon as its certificate does in [remote] address"),
    ],
)
def test_a_refused_certificate_names_the_setting_that_fixes_it(
    tmp_path: Path, host: str, trusted: bool, said: str
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    daemon_data = tmp_path / "daemon"
    token = add_token(daemon_data, "builder")
    listen = "tls:127.0.0.1:0" if host == "127.0.0.1" else "tls:localhost:0"
    extra = ("--tls-cert", str(cert), "--tls-key", str(key))
    with running_daemon(daemon_data, listen, *extra) as daemon:
        port = daemon.address.rsplit(":", 1)[1]
        refused = subprocess.run(
            [*LAZY, "memory", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            env={
                **os.environ,
                "LAZY_STORAGE": "remote",
                "LAZY_REMOTE": f"tls:{host}:{port}",
                "LAZY_TOKEN": token,
                "LAZY_TLS_CA": str(cert) if trusted else "",
            },
        )

    assert refused.returncode == 7
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    assert said in refused.stderr
