"""The `lazy` command: argument parsing, dispatch, and the one place errors become exit codes
(rpc/cli/errors.py says them)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lazy_memory.adapters.config import HOOK_WORDS

if TYPE_CHECKING:
    import argparse

MCP_WORDS = ("mcp",)
"""The MCP server's arguments, as `lazy init --claude-code` and `claude mcp add` write them."""


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; each command group adds its own subcommands."""
    # Each command module builds its parser without importing the engine's models (pydantic)
    # or a backend: those are imported on the run path of the commands that use them.
    from lazy_memory.rpc.cli import doctor, engine, init, launch, mcp, memory, search, web
    from lazy_memory.rpc.cli.common import VersionAction
    from lazy_memory.rpc.cli.parsing import CommandParser, add_command_group

    parser = CommandParser(
        prog="lazy", description="lazy-memory: the shared memory store of lazy's agents."
    )
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = add_command_group(parser)
    memory.add_commands(commands)
    search.add_commands(commands)
    mcp.add_commands(commands)
    engine.add_commands(commands)
    doctor.add_commands(commands)
    init.add_commands(commands)
    launch.add_commands(commands)
    web.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `lazy` command line and return its exit status."""
    given = list(sys.argv[1:] if argv is None else argv)
    if tuple(given) == HOOK_WORDS:
        # Every session start runs it: on a SQLite or files store it answers before a parser,
        # asyncio or a model is imported (the kept section, or the store's plain rows).
        from lazy_memory.rpc.cli.hook import light_hook

        if light_hook():
            return 0
    if tuple(given) == MCP_WORDS:
        # The harness waits for its answer to `initialize` and `tools/list` (or, in `claude -p`,
        # does not wait): no parser, no asyncio before they are answered.
        from lazy_memory.rpc.cli.mcp import serve_now

        return serve_now()
    from lazy_memory.rpc.cli import errors
    from lazy_memory.rpc.cli.parsing import CommandLineError

    words, passthrough = _split_passthrough(given)
    # Before parsing: a command line that asked for JSON gets its usage error in JSON too.
    errors.Output.as_json = "--json" in words
    try:
        arguments = build_parser().parse_args(words)
    except CommandLineError as error:
        return errors.report_usage(error.parser, error.message)
    if arguments.run is None:
        # `lazy`, `lazy memory`: a command group without its command shows what it holds.
        arguments.group.print_help()
        return 0
    errors.Output.as_json = bool(getattr(arguments, "json", False))
    if passthrough is not None:
        arguments.arguments = passthrough
    return _run(arguments)


def _run(arguments: argparse.Namespace) -> int:
    """Run the parsed command; every way it can fail becomes its exit status and one report."""
    import asyncio  # after parsing: `--help`, `--version` and usage errors never need it

    from lazy_memory.engine.errors import LazyMemoryError
    from lazy_memory.rpc.cli import errors
    from lazy_memory.rpc.usage import UsageError

    try:
        status: int = asyncio.run(arguments.run(arguments))
        sys.stdout.flush()
        return status
    except LazyMemoryError as error:
        _traceback(arguments)
        return errors.report_error(error)
    except UsageError as error:
        _traceback(arguments)
        return errors.report("UsageError", str(error), errors.EXIT_USAGE)
    except KeyboardInterrupt:
        message = "nothing more was written"
        return errors.report("Interrupted", message, errors.EXIT_INTERRUPTED, heading="interrupted")
    except BrokenPipeError:
        # The reader went away (`lazy memory list | head`): not an error worth a word.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        _traceback(arguments)
        return errors.report(
            "InternalError",
            f"{type(error).__name__}: {error} (rerun with --debug for the traceback and report it)",
            errors.EXIT_INTERNAL,
            heading="internal error",
        )


def _split_passthrough(words: list[str]) -> tuple[list[str], list[str] | None]:
    """`lazy launch claude [...] -- ARGS`: what follows the first `--` goes to claude unparsed.

    argparse keeps or drops a `--` depending on what follows it, and options after it would
    still be matched against lazy's own; so for `launch` (the command is the first word that
    is not an option) the harness's arguments are cut off before parsing.
    """
    command = next((word for word in words if not word.startswith("-")), None)
    if command != "launch" or "--" not in words:
        return words, None
    cut = words.index("--")
    return words[:cut], words[cut + 1 :]


def _traceback(arguments: argparse.Namespace) -> None:
    """The traceback of the error being handled, with --debug."""
    if arguments.debug:
        import traceback

        traceback.print_exc()
