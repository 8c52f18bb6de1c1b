"""What the `lazy` command says on standard error when something goes wrong, and its exit status.

An error is one line, `lazy: error: MESSAGE`; a warning `lazy: warning: MESSAGE`. Under `--json`
each is instead one JSON object on a line of its own, so a script reads standard error as it
reads standard output:

    {"error": {"type": "NotFound", "message": "...", "exit_status": 3, "data": {}}}
    {"warning": {"message": "..."}}

`type` is the engine's error (engine/errors.py, whose classes carry their exit statuses), or
`UsageError` (exit 2), `Interrupted` (130), `InternalError` (70, a bug); `data` is what the
error carries besides its message (the JSON-RPC error's data: a removed record's revision, a
rejected compact's fallback reason).
The shape is documented in the README's errors section; tests/e2e/test_command_line.py holds it.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from lazy_memory.engine.errors import LazyMemoryError, reported_name

if TYPE_CHECKING:
    import argparse

# An engine error exits with its class's exit_status (engine/errors.py); these are the rest.
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class Output:
    """How this process reports: as text, or (under `--json`) as JSON; set once by main."""

    as_json = False


def report(
    kind: str,
    message: str,
    status: int,
    data: dict[str, object] | None = None,
    *,
    heading: str = "error",
) -> int:
    """Say an error of kind (its type's name) on standard error, as `lazy: HEADING: MESSAGE`
    or as JSON; return status, its exit status."""
    if Output.as_json:
        error = {"type": kind, "message": message, "exit_status": status, "data": data or {}}
        _print_json({"error": error})
    else:
        from lazy_memory.engine.visible import visible_line

        # One line, whatever stored text or input the message quotes.
        print(f"lazy: {heading}: {visible_line(message)}", file=sys.stderr)
    return status


def report_error(error: LazyMemoryError) -> int:
    """Report an engine error; its exit status."""
    return report(reported_name(error), str(error), error.exit_status, error.data)


def report_usage(parser: argparse.ArgumentParser, message: str) -> int:
    """A wrong command line, with the usage of the command it was given to; exit status 2."""
    if Output.as_json:
        usage = parser.format_usage().strip()
        return report("UsageError", f"{parser.prog}: {message}", EXIT_USAGE, {"usage": usage})
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def warn(message: str) -> None:
    """Say something the user should know that does not stop the command."""
    if Output.as_json:
        _print_json({"warning": {"message": message}})
    else:
        print(f"lazy: warning: {message}", file=sys.stderr)


def _print_json(value: object) -> None:
    from lazy_memory.engine.visible import printable_json

    print(printable_json(json.dumps(value, ensure_ascii=False)), file=sys.stderr)
