"""The `lazy` command: argument parsing, dispatch, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lazy_memory.engine.errors import (
    CompactRejected,
    Conflict,
    InvalidConfig,
    InvalidQuery,
    InvalidRecord,
    LazyMemoryError,
    LLMUnavailable,
    NotFound,
    PermissionDenied,
    StorageUnavailable,
)

if TYPE_CHECKING:
    import argparse

HOOK_WORDS = ("memory", "context", "--hook")
"""The SessionStart hook's arguments, as `lazy init --claude-code` writes them."""
MCP_WORDS = ("mcp",)
"""The MCP server's arguments, as `lazy init --claude-code` and `claude mcp add` write them."""

EXIT_STATUSES: dict[type[LazyMemoryError], int] = {
    NotFound: 3,
    InvalidRecord: 4,
    InvalidConfig: 4,
    InvalidQuery: 4,
    Conflict: 5,
    PermissionDenied: 6,
    StorageUnavailable: 7,
    CompactRejected: 8,
    LLMUnavailable: 9,
}
"""Exit status of each engine error; 1 for any other, 2 for a usage error, 70 for a bug."""

EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; each command group adds its own subcommands."""
    # Each command module builds its parser without importing the engine's models (pydantic)
    # or a backend: those are imported on the run path of the commands that use them.
    import argparse

    from lazy_memory.rpc.cli import doctor, engine, init, launch, mcp, memory, search, web
    from lazy_memory.rpc.cli.common import VersionAction

    parser = argparse.ArgumentParser(
        prog="lazy", description="lazy-memory: the shared memory store of lazy's agents."
    )
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
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
    from lazy_memory.rpc.cli.common import UsageError

    parser = build_parser()
    words, passthrough = _split_passthrough(given)
    arguments = parser.parse_args(words)
    if passthrough is not None:
        arguments.arguments = passthrough
    import asyncio  # after parsing: `--help`, `--version` and usage errors never need it

    try:
        status: int = asyncio.run(arguments.run(arguments))
        sys.stdout.flush()
        return status
    except LazyMemoryError as error:
        return _fail(arguments, error, EXIT_STATUSES.get(type(error), 1))
    except UsageError as error:
        return _fail(arguments, error, EXIT_USAGE)
    except KeyboardInterrupt:
        print("lazy: interrupted; nothing more was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`lazy memory list | head`): not an error worth a word.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        if arguments.debug:
            import traceback

            traceback.print_exc()
        print(
            f"lazy: internal error: {type(error).__name__}: {error} (rerun with --debug "
            "for the traceback and report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


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


def _fail(arguments: argparse.Namespace, error: Exception, status: int) -> int:
    if arguments.debug:
        import traceback

        traceback.print_exc()
    from lazy_memory.engine.visible import visible_line

    # One line, whatever stored text or input the message quotes (names come quoted by repr).
    print(f"lazy: error: {visible_line(str(error))}", file=sys.stderr)
    return status
