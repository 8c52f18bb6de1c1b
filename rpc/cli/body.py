"""Where `lazy memory save` takes a body from: a flag, a file, standard input, or $EDITOR."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.rpc.cli.common import UsageError

STDIN_PROMPT = "lazy: reading the body from standard input; end it with Ctrl-D"


def read_body(
    text: str | None, file: str | None, current: str | None, *, fields_given: bool
) -> str | None:
    """The body to save, or None to keep the current one (an empty body for a new record).

    In order: --body, --body-file (`-` is standard input, read only when asked for), then, on
    a terminal, $VISUAL/$EDITOR opened on the current body, unless the save gives a type or a
    description (fields_given): `lazy memory save x -d "..."` changes the description only.
    Standard input is never read unasked: a script, or an agent's shell that leaves it open,
    would wait on it forever.
    """
    if text is not None:
        return text
    if file == "-":
        return _read_standard_input()
    if file is not None:
        try:
            return _decode(Path(file).read_bytes(), file)
        except OSError as error:
            raise UsageError(f"cannot read --body-file {file}: {error.strerror}") from None
    if fields_given or sys.stdin is None or not sys.stdin.isatty():
        return None
    return _edit(current or "")


def _read_standard_input() -> str:
    if sys.stdin is None:  # started with standard input closed
        raise UsageError("--body-file - reads standard input, but it is closed")
    if sys.stdin.isatty():
        print(STDIN_PROMPT, file=sys.stderr, flush=True)
    return _decode(sys.stdin.buffer.read(), "standard input")


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidRecord(
            f"the body from {source} is not valid UTF-8 (byte {error.start})"
        ) from None


def _edit(current: str) -> str | None:
    """Open the user's editor on the current body; None when it comes back unchanged."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="lazy-memory-") as directory:
        path = Path(directory) / "body.md"
        path.write_text(current, encoding="utf-8")
        try:
            finished = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as error:
            raise UsageError(
                f"cannot start the editor {editor!r} ({error.strerror}): set $EDITOR, or pass "
                "--body TEXT, or --body-file FILE (- for standard input)"
            ) from None
        if finished.returncode != 0:
            raise UsageError(
                f"the editor {editor!r} exited with status {finished.returncode}; nothing saved"
            )
        edited = _decode(path.read_bytes(), "the editor")
    return None if edited == current else edited
