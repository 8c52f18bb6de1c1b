"""`lazy init`: set a repository up for lazy-memory, offer to import harness memory, and wire
Claude Code (`--claude-code`, undone by `--remove`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazy_memory.adapters.config import CONFIG_FILE, find_root, load_settings
from lazy_memory.engine.wording import counted
from lazy_memory.rpc.cli import init_config
from lazy_memory.rpc.cli.common import cli_service, common_flags, refuse_agent
from lazy_memory.rpc.cli.importing import (
    IMPORT_HINT,
    confirm,
    print_preview,
    run_import,
    these_records,
)
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings
    from lazy_memory.engine.service import MemoryService
    from lazy_memory.rpc.cli.setup_claude_code import Answers, Report


def add_commands(commands: Any) -> None:
    """Add `lazy init` to the top-level command parser."""
    init = commands.add_parser(
        "init",
        parents=[common_flags()],
        help="create lazy.toml and the store for this repository; wire Claude Code",
        description="Create lazy.toml at the repository's root and the data directory, then "
        "offer to import the harness's memory files (Claude Code's) as records. With "
        "--claude-code, also add a SessionStart hook to .claude/settings.json, the lazy MCP "
        "server to .mcp.json (approved for you in .claude/settings.local.json, which git is "
        "told to ignore) and turn Claude Code's own auto memory off, each spliced into the "
        "files as they are; a re-run changes nothing, and --remove puts every file back as it "
        "was.",
    )
    init.add_argument(
        "--claude-code",
        action="store_true",
        help="wire this repository for Claude Code: the SessionStart hook and the MCP server",
    )
    init.add_argument(
        "--remove",
        action="store_true",
        help="with --claude-code: undo it (every file back as it was before; your own "
        "changes since stay)",
    )
    memory = init.add_mutually_exclusive_group()
    memory.add_argument(
        "--keep-auto-memory",
        action="store_true",
        help="with --claude-code: leave Claude Code's own auto memory as it is (by default it "
        "is turned off: lazy's memory takes its place)",
    )
    # What scripts written for the old offer pass; it is the default now.
    memory.add_argument("--auto-memory-off", action="store_true", help=argparse.SUPPRESS)
    answers = init.add_mutually_exclusive_group()
    answers.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="accept the offers (the import of the harness's memory) unasked",
    )
    answers.add_argument(
        "--non-interactive",
        action="store_true",
        help="make no offers; print the command that does each instead",
    )
    init_config.add_arguments(init)
    init.set_defaults(run=run_init)


async def run_init(arguments: argparse.Namespace) -> int:
    """Write lazy.toml (never over one), open the store, offer the import, wire Claude Code."""
    # An agent's LAZY_TASK_ID, set even if empty, makes it read-only: refused before any write.
    refuse_agent("init")
    flags = {
        "--remove": arguments.remove,
        "--keep-auto-memory": arguments.keep_auto_memory,
        "--auto-memory-off": arguments.auto_memory_off,
    }
    for flag, given in flags.items():
        if given and not arguments.claude_code:
            raise UsageError(f"{flag} goes with --claude-code: `lazy init --claude-code {flag}`")
    if arguments.remove and (arguments.keep_auto_memory or arguments.auto_memory_off):
        raise UsageError("--remove puts autoMemoryEnabled back as it was: give it alone")
    wanted = init_config.requested(arguments)
    # The set-up's modules wait for the run: `lazy --help` and the other commands need none.
    from lazy_memory.adapters.project_key import project_key_warning
    from lazy_memory.rpc.cli import setup_claude_code
    from lazy_memory.rpc.cli.setup_claude_code import Answers, Report

    root = find_root(Path.cwd().resolve())
    report = Report(root, as_json=arguments.json)
    if arguments.remove:
        setup_claude_code.remove(root, load_settings().data_dir, report)
        report.finish()
        return 0
    answers = Answers(
        yes=arguments.yes,
        interactive=not (arguments.non_interactive or arguments.json) and sys.stdin.isatty(),
    )
    settings = load_settings()
    data_dir = settings.data_dir
    if arguments.claude_code:
        # Every file is read and merged in memory first: one that is not JSON stops the run
        # before lazy.toml or anything else is written.
        setup_claude_code.check_files(root, settings)
    config = root / CONFIG_FILE
    if config.exists():
        init_config.check_unchanged(wanted, settings, str(config))
        report.say(f"{config} already exists; left as it is.")
        report.file(config, "unchanged")
        warning = project_key_warning(settings)
        if warning is not None:
            report.warn(warning)
        report.fields["storage"] = {"backend": settings.backend, "project": settings.project}
    else:
        project = _shared_key(settings)
        config.write_text(init_config.config_text(wanted, project, root.name), encoding="utf-8")
        if project is None:
            report.say(f"Wrote {config} (backend {wanted.backend}, no project key).")
            _ask_for_a_key(settings, wanted.backend, report)
        else:
            report.say(f"Wrote {config} (backend {wanted.backend}, project key {project!r}).")
        report.file(config, "created")
        report.fields["storage"] = {"backend": wanted.backend, "project": project}
    _ignore_data_dir(data_dir, report)
    async with cli_service() as service:
        records = len(await service.index())
        report.fields["storage"]["records"] = records
        report.say(_store_state(load_settings(), records))
        report.commit.append(CONFIG_FILE)
        await _offer_import(service, answers, report)
    wire = arguments.claude_code or setup_claude_code.offer_setup(root, answers, report)
    if wire:
        setup_claude_code.set_up(
            root, settings, report, keep_auto_memory=arguments.keep_auto_memory
        )
    report.finish()
    return 0


def _shared_key(settings: Settings) -> str | None:
    """The project key to write: LAZY_PROJECT's, or the one guessed from the git remote; None
    when the guess is this checkout's path, which no other checkout shares."""
    if settings.project is not None:
        return settings.project
    guess = settings.guessed_project_key
    return None if guess.per_checkout else guess.key


def _ask_for_a_key(settings: Settings, backend: str, report: Report) -> None:
    """Say why lazy.toml names no project key; a warning when the store is shared now."""
    from lazy_memory.adapters.project_key import name_the_project

    path = settings.guessed_project_key.key
    used = "" if backend == "postgres" else " (only a postgres store uses one)"
    said = (
        f"{CONFIG_FILE} names no [storage] project{used}: the repository has no git remote to "
        f"take it from, and this checkout's path ({path}) is no key another checkout would "
        f"share. {name_the_project(settings)}."
    )
    if backend == "postgres":
        report.warn(said)
    else:
        report.hint(said)


def _store_state(settings: Settings, records: int) -> str:
    """What the configured store holds now, and where it is."""
    from lazy_memory.adapters import EMBEDDED_BACKENDS

    held = counted(records, "record") if records else "no records yet"
    if settings.backend in EMBEDDED_BACKENDS:
        first = "" if records else ": the first save writes them there"
        return (
            f"The store in {settings.data_dir} holds {held}{first}; its .gitignore keeps its "
            "files out of git."
        )
    if settings.backend == "postgres":
        return f"The postgres store holds {held} under the project key {settings.project_key!r}."
    return f"The daemon's store at {settings.remote} holds {held}."


def _ignore_data_dir(data_dir: Path, report: Report) -> None:
    """Create the data directory with its .gitignore; add the .gitignore to an old one."""
    from lazy_memory.adapters.data_dir import GITIGNORE, create_data_dir, write_gitignore

    ignore = data_dir / GITIGNORE
    existed = ignore.exists()
    try:
        create_data_dir(data_dir)
        write_gitignore(data_dir)
    except OSError as error:
        report.warn(f"cannot create {ignore}: {error.strerror}")
        return
    report.file(ignore, "unchanged" if existed else "created")


async def _offer_import(service: MemoryService, answers: Answers, report: Report) -> None:
    preview = await service.import_memory(apply=False)
    count = len(preview.plan.records)
    found: dict[str, Any] = {"found": count, "imported": []}
    report.fields["import"] = found
    if count == 0:
        report.say("No harness memory to import.")
        return
    if answers.yes and report.as_json:
        result = await service.import_memory(apply=True)
        found["imported"] = result.imported
        return
    if not answers.yes:
        if not answers.interactive:
            found_there = f"{counted(count, 'record')} in the harness's memory files"
            report.hint(f"Found {found_there}; {IMPORT_HINT}.")
            return
        print_preview(preview.plan)
        if not confirm(f"\nImport {these_records(count)} now? [y/N] "):
            report.say(f"Nothing imported; {IMPORT_HINT}.")
            return
    # The preview is printed once: above, when it was asked about.
    await run_import(service, yes=True, as_json=False, previewed=not answers.yes)
