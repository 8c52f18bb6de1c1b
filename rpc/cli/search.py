"""`lazy search QUERY`: the records a query finds, best first, matches highlighted in a terminal."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lazy_memory.engine.constants import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT
from lazy_memory.rpc.cli.common import all_read, cli_service, common_flags, print_json

_BOLD_RED = "\x1b[1;31m"  # how grep marks its matches
_RESET = "\x1b[0m"


def add_commands(commands: Any) -> None:
    """Add `lazy search` to the top-level command parser."""
    search = commands.add_parser(
        "search",
        parents=[common_flags()],
        help="find records by words, phrases, type and name",
        description="Search the live records' names, descriptions and bodies. A query holds "
        'words (all must match), "quoted phrases", type:TYPE, name:NAME or name:PREFIX*, '
        '-word and -"phrase" to leave records out, and in:memories (the default scope). '
        "Quote the whole query for your shell (lazy search 'deploy -\"old way\"'), or put -- "
        "before a query that starts an argument with -. Each hit is "
        "a line `name (type): description` and an indented snippet; no hits print nothing "
        "(and say so on standard error) and exit 0. Records the store holds but cannot read "
        "are named on standard error after the hits, with exit status 7.",
    )
    search.add_argument("query", nargs="+", metavar="QUERY", help="the query (its words joined)")
    search.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_SEARCH_LIMIT,
        metavar="N",
        help=f"show at most N hits, 1 to {MAX_SEARCH_LIMIT} (default {DEFAULT_SEARCH_LIMIT})",
    )
    search.set_defaults(run=search_records)


async def search_records(arguments: argparse.Namespace) -> int:
    """Print the hits of a query: an index line each, then its snippet, indented."""
    from lazy_memory.engine.index import shown_description
    from lazy_memory.engine.ports import read_partly
    from lazy_memory.engine.search_snippets import MARK_END, MARK_START
    from lazy_memory.engine.visible import visible_line

    query = " ".join(arguments.query)
    async with cli_service() as service:
        hits, unreadable = await read_partly(service.search(query, arguments.limit))
    if arguments.json:
        print_json([hit.model_dump(mode="json") for hit in hits])
        return all_read(unreadable)
    if not hits:
        print(f"No live record matches {query}", file=sys.stderr)
        return all_read(unreadable)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for hit in hits:
        # Made visible before the colour goes in: the only escape codes printed are lazy's own.
        snippet = visible_line(hit.snippet)
        if colour:
            snippet = snippet.replace(MARK_START, _BOLD_RED).replace(MARK_END, _RESET)
        print(f"{visible_line(hit.name)} ({hit.type.value}): {shown_description(hit.description)}")
        print(f"    {snippet}")
    return all_read(unreadable)


def _limit(text: str) -> int:
    """--limit's value: a whole number from 1 to MAX_SEARCH_LIMIT, else a usage error."""
    try:
        limit = int(text)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise argparse.ArgumentTypeError(
            f"give a number from 1 to {MAX_SEARCH_LIMIT}, not {text!r}"
        )
    return limit
