"""Where `lazy memory save` takes a body from: a flag, a file, standard input, or $EDITOR."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.rpc.usage import UsageError

STDIN_PROMPT = "lazy: reading the body from standard input; end it with Ctrl-D"


def read_body(
    text: str | None, file: str | None, current: str | None, *, fields_given: bool
) -> str | None:
    """The body to save, or None to keep the current one (an empty body for a new record).

    In order: --body, --body-file (`-` is standard input, read only when asked for), then, on
    a terminal, $VISUAL/$EDITOR opened on the current body, unless the save gives a type or a
    description (fields_given): `lazy memory save x -d "..."` changes the description only.
    Standard input is never read unasked: a script, or an agent's shell that leaves it open,
    would wait on it forever. But text already waiting on it (`echo text | lazy memory save
    x`, `... < notes.md`) is refused, unread, rather than dropped for a save that keeps the
    body: reading it would guess, and would swallow the rest of a `while read` loop's input.
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
    if opens_editor(text, file, fields_given=fields_given):
        return _edit(current or "")
    if sys.stdin is not None and not sys.stdin.isatty() and text_waiting(sys.stdin):
        raise UsageError(
            "standard input holds text, which a save reads only with --body-file -: add "
            "--body-file - to save it as the body, or redirect standard input from /dev/null to "
            "leave it unread; nothing was written"
        )
    return None


def opens_editor(text: str | None, file: str | None, *, fields_given: bool) -> bool:
    """Whether read_body takes the body from $EDITOR: no body given, nor a type or a
    description, and a terminal on standard input."""
    given = text is not None or file is not None or fields_given
    return not given and sys.stdin is not None and sys.stdin.isatty()


def text_waiting(stream: IO[str]) -> bool:
    """Whether stream holds bytes a read would get at once, found without reading any: a file
    (redirected with `<`) not at its end, or a pipe or socket with bytes in it.

    A pipe whose writer has not written yet holds none: only what is there when the save
    runs can be seen without waiting on it.
    """
    try:
        descriptor = stream.fileno()
        status = os.fstat(descriptor)
        if stat.S_ISREG(status.st_mode):
            return status.st_size > os.lseek(descriptor, 0, os.SEEK_CUR)
        if not (stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode)):
            return False  # a terminal, /dev/null
        import array
        import fcntl
        import termios

        waiting = array.array("i", [0])
        fcntl.ioctl(descriptor, termios.FIONREAD, waiting)
    except (OSError, ValueError):  # no descriptor (closed, replaced), or no FIONREAD
        return False
    return waiting[0] > 0


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
