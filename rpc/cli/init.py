"""`lazy init`: set a repository up for lazy-memory, and offer to import harness memory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lazy_memory.adapters.config import CONFIG_FILE, find_root
from lazy_memory.rpc.cli.common import cli_service, common_flags
from lazy_memory.rpc.cli.importing import IMPORT_HINT, confirm, print_preview, run_import

TEMPLATE = """\
# lazy-memory configuration; environment variables (LAZY_*) override these keys.

[storage]
backend = "sqlite"        # "sqlite" (default), "files", or "remote"
# data_dir = ".lazy"      # where the store lives, relative to this file

[memory]
warn_bytes = 4096         # advisory size of the memory section injected into launches

[compact]
# model = "claude-haiku-4-5"        # the model `lazy memory compact` asks
# command = "my-summarizer"         # or a command: prompt on stdin, summary on stdout
"""


def add_commands(commands: Any) -> None:
    """Add `lazy init` to the top-level command parser."""
    init = commands.add_parser(
        "init",
        parents=[common_flags()],
        help="create lazy.toml and the store for this repository",
        description="Create lazy.toml at the repository's root and the data directory, then "
        "offer to import the harness's memory files (Claude Code's) as records.",
    )
    init.add_argument(
        "--non-interactive",
        action="store_true",
        help="do not offer the import; print the command that does it instead",
    )
    init.set_defaults(run=run_init)


async def run_init(arguments: argparse.Namespace) -> int:
    """Write lazy.toml (never over an existing one), open the store, offer the import."""
    root = find_root(Path.cwd().resolve())
    config = root / CONFIG_FILE
    if config.exists():
        print(f"{config} already exists; left as it is.")
    else:
        config.write_text(TEMPLATE, encoding="utf-8")
        print(f"Wrote {config}.")
    async with cli_service() as service:
        print("The store is ready; add .lazy/ to .gitignore if it lives in the repository.")
        preview = await service.import_memory(apply=False)
        count = len(preview.plan.records)
        if count == 0:
            print("No harness memory to import.")
            return 0
        if arguments.non_interactive or not sys.stdin.isatty():
            print(f"Found {count} record(s) in the harness's memory files; {IMPORT_HINT}.")
            return 0
        print_preview(preview.plan)
        if not confirm(f"\nImport these {count} records now? [y/N] "):
            print(f"Nothing imported; {IMPORT_HINT}.")
            return 0
        return await run_import(service, yes=True, as_json=False)
