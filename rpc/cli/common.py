"""What every CLI command shares: common flags, the human identity, the service, JSON output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from lazy_memory.adapters import EMBEDDED_BACKENDS, open_service
from lazy_memory.adapters.config import is_project_root, load_settings, task_id_from
from lazy_memory.engine.errors import PermissionDenied
from lazy_memory.rpc.identity import human_identity

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings
    from lazy_memory.engine.index import UnreadableRecord
    from lazy_memory.engine.service import MemoryService


def common_flags() -> argparse.ArgumentParser:
    """A parent parser with the flags every leaf command takes."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print machine-readable JSON")
    # SUPPRESS keeps `lazy --debug memory list` working: the leaf must not reset it to False.
    parent.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    return parent


def refuse_agent(command: str) -> None:
    """Refuse a command that writes to an agent session, before anything is opened or written.

    The service refuses agents too, but only once the store is open; a command that writes
    outside it (lazy.toml, tokens, a migration's target) or prompts first is stopped here.
    """
    task_id = task_id_from(os.environ)
    if task_id is None:
        return
    from lazy_memory.engine.identity import agent_name

    raise PermissionDenied(
        "this is an agent session (LAZY_TASK_ID is set) and agents are read-only: "
        f"`lazy {command}` was refused for {agent_name(task_id)}; nothing was written"
    )


@asynccontextmanager
async def cli_service() -> AsyncIterator[MemoryService]:
    """Open the configured store as the person at the terminal, and close it afterwards;
    say where the store is when the command started it (an embedded one's first write)."""
    # Imported here: the hook's kept path imports this module and reports nothing.
    from lazy_memory.rpc.cli.errors import warn

    settings = load_settings()
    for warning in settings.warnings:
        warn(warning)
    # Reading creates nothing, so a store that is not there yet is one the command's
    # first write is about to start.
    new_store = settings.backend in EMBEDDED_BACKENDS and not settings.data_dir.exists()
    service = await open_service(settings, human_identity(settings.task_id))
    try:
        yield service
    finally:
        await service.aclose()
    if new_store and settings.data_dir.exists():
        _say_new_store(settings)


def _say_new_store(settings: Settings) -> None:
    """Where the store the command started is; a warning when that is a folder lazy fell back
    on because no project was found around it."""
    from lazy_memory.rpc.cli.errors import Output, warn

    where = settings.data_dir
    if is_project_root(settings.root) or where != settings.root / ".lazy":
        if not Output.as_json:
            print(f"lazy: started a new store in {where}", file=sys.stderr)
        return
    warn(
        f"started a new store in {where}: no git repository or lazy.toml was found in "
        f"{settings.root} or above it, so this folder is the project's root. To keep the "
        "store with a project, run lazy inside it (`lazy init` makes a folder one), or set "
        "LAZY_DATA"
    )


def print_json(value: object) -> None:
    """Print value as indented JSON: non-ASCII text as it is, unless a terminal could act on it
    (a control or format character is written as its JSON escape: engine/visible.py)."""
    from lazy_memory.engine.visible import printable_json

    print(printable_json(json.dumps(value, indent=2, ensure_ascii=False)))


def all_read(unreadable: Sequence[UnreadableRecord]) -> int:
    """0 when the records a command read were all it asked for; else, once it has printed
    them, UnreadableRecords naming those the store could not read, which `lazy` reports as
    every error (exit status 7): the output is whole but for them."""
    if not unreadable:
        return 0
    from lazy_memory.engine.errors import UnreadableRecords
    from lazy_memory.engine.index import unreadable_note

    raise UnreadableRecords(unreadable_note(unreadable), unreadable)


class VersionAction(argparse.Action):
    """--version: an action of its own, so it prints and exits before any command is required."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from lazy_memory.rpc.version import VERSION

        print(f"lazy {VERSION}")
        parser.exit()
