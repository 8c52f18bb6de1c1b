"""The `lazy` command line's parser: an error belongs to the command it was made in, and a
command group given no command prints its help.

argparse reports an unknown argument from the top-level parser, with the top-level usage, even
when it was given to a subcommand (`lazy memory list --bogus`); here the subcommand that did
not know it reports it, with its own usage. Errors are raised rather than printed, so that the
caller says them in the output the command asked for (rpc/cli/errors.py: `--json`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn


class CommandLineError(Exception):
    """The command line is wrong: argparse's message, and the (sub)command it concerns."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser (and, through add_subparsers, every subcommand's) that raises
    CommandLineError instead of printing and exiting, and refuses what it does not know."""

    def error(self, message: str) -> NoReturn:
        """Raise the error for the caller to report; argparse would print it and exit."""
        raise CommandLineError(self, message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse args; what this parser does not know is refused here, by the innermost
        command given it, rather than passed up to the top-level parser."""
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown


def add_command_group(parser: argparse.ArgumentParser) -> Any:
    """parser's subcommands: given none, the command prints parser's help (see main)."""
    parser.set_defaults(run=None, group=parser)
    return parser.add_subparsers(title="commands", metavar="COMMAND")
