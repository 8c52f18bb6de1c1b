"""`lazy doctor`: what launches inject, how fresh the compact is, and what to do about it."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazy_memory.engine.wording import agreeing, counted
from lazy_memory.rpc.cli.common import (
    cli_service,
    common_flags,
    print_json,
    refuse_agent,
)
from lazy_memory.rpc.cli.importing import IMPORT_HINT, run_import
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.adapters.claude_code.files import InstalledHook
    from lazy_memory.engine.doctor import Diagnosis

# Keyed by the values of the engine's Remedy (a StrEnum, so its members find them), which
# this module does not import until doctor runs.
EXIT_STATUSES = {
    "none": 0,
    "compact": 10,
    "curate": 11,
    "clear": 12,
    "try-compact": 13,
    "repair": 14,
}
"""doctor's exit status by remedy, for scripts: 0 nothing to do, 10 compact, 11 curate,
12 clear the compact, 13 try compacting (only the model's summary could be accepted, which
doctor cannot know without calling the model), 14 repair the records the store cannot read."""


def add_commands(commands: Any) -> None:
    """Add `lazy doctor` to the top-level command parser."""
    doctor = commands.add_parser(
        "doctor",
        parents=[common_flags()],
        help="check the injected memory's size and the compact's freshness",
        description="Measure the memory section launches inject against [memory] warn_bytes, "
        "report how stale the compact is, and recommend what helps. Exit status: 0 nothing to "
        "do, 10 run `lazy memory compact`, 11 curate the records or raise warn_bytes, 12 run "
        "`lazy memory compact --clear` (the compact costs more than the plain index), 13 try "
        "`lazy memory compact` (only the model's summary could help, which doctor cannot know "
        "without calling the model; a rejected compact writes nothing), 14 replace or repair "
        "the records the store holds but cannot read (doctor lists them).",
    )
    doctor.add_argument(
        "--import-memory",
        action="store_true",
        help="import the harness's own memory files (Claude Code's) as records: preview first",
    )
    doctor.add_argument("--yes", action="store_true", help="import without asking")
    doctor.set_defaults(run=run_doctor)


async def run_doctor(arguments: argparse.Namespace) -> int:
    """Diagnose the store and exit with the remedy's status; or import harness memory."""
    if arguments.yes and not arguments.import_memory:
        raise UsageError("--yes goes with --import-memory")
    if arguments.import_memory:
        refuse_agent("doctor --import-memory")
    from lazy_memory.adapters.config import load_settings
    from lazy_memory.adapters.launch.log import last_launches
    from lazy_memory.adapters.project_key import project_key_warning

    async with cli_service() as service:
        if arguments.import_memory:
            return await run_import(service, yes=arguments.yes, as_json=arguments.json)
        from lazy_memory.engine.ports import read_partly

        diagnosis = await service.doctor()
        entries, _ = await read_partly(service.index())
        newest = max(entries, key=lambda entry: entry.updated_at, default=None)
    settings = load_settings()
    launches = last_launches(settings.data_dir)
    last = launches[-1] if launches else None
    hook = _installed_hook(settings.root)
    # Not the engine's to find: which key the store is read under is the configuration's.
    warnings = [warning for warning in (project_key_warning(settings),) if warning is not None]
    if arguments.json:
        print_json(
            {
                **diagnosis.model_dump(mode="json"),
                "last_launch": last,
                "installed_hook": None if hook is None else dataclasses.asdict(hook),
                "warnings": warnings,
            }
        )
    else:
        from lazy_memory.engine.visible import visible_line
        from lazy_memory.rpc.cli.doctor_launches import UNLOGGED, hook_line, last_launch_line

        _print(diagnosis)
        # The launch log is a file anyone with the data directory can write: shown as stored text.
        newest_record = None if newest is None else (newest.name, newest.revision)
        print(visible_line(last_launch_line(last, newest_record)))
        print(UNLOGGED)
        said = None if hook is None else hook_line(hook)
        if said is not None:
            print(visible_line(said))
        for warning in warnings:
            print(f"Warning: {visible_line(warning)}.")
    return EXIT_STATUSES[diagnosis.remedy]


def _installed_hook(root: Path) -> InstalledHook | None:
    """lazy's hook in the project's Claude Code settings; None where Claude Code is not set up
    at all (no .claude/ folder): nothing to say there."""
    from lazy_memory.adapters.claude_code.files import CLAUDE_DIR, installed_hook

    return installed_hook(root) if (root / CLAUDE_DIR).is_dir() else None


def _print(diagnosis: Diagnosis) -> None:
    from lazy_memory.engine.visible import shown_name, visible_line

    margin = diagnosis.bytes - diagnosis.warn_bytes
    verdict = f"over by {margin:,}" if margin > 0 else f"{-margin:,} to spare"
    print(
        f"Injected memory: {diagnosis.bytes:,} bytes for "
        f"{counted(diagnosis.record_count, 'record')} "
        f"(advisory size {diagnosis.warn_bytes:,}: {verdict})."
    )
    if not diagnosis.compact_exists:
        print("Compact: none; launches get the plain index.")
    else:
        assert diagnosis.compact_generated_at is not None
        when = diagnosis.compact_generated_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        newer, removed = diagnosis.written_since_compact, diagnosis.removed_since_compact
        freshness = (
            "current"
            if not newer and not removed
            else f"{counted(len(newer), 'record')} written and {len(removed)} removed since"
        )
        print(
            f"Compact: {visible_line(diagnosis.compact_generator or '')}, generated {when}; "
            f"{freshness} (the plain index would be {diagnosis.bytes_without_compact:,} bytes)."
        )
    if diagnosis.unreadable:
        count = len(diagnosis.unreadable)
        print(f"Unreadable: {counted(count, 'record')} the store holds but cannot read:")
        # One a line: a name may hold a comma.
        for row in diagnosis.unreadable:
            print(f"  {shown_name(row.name)}: {visible_line(row.reason)}")
    # Advice may quote the store's own words (why the compact cannot be read).
    print(visible_line(diagnosis.advice))
    if diagnosis.hook is not None:
        print(f"Claude Code hook: {visible_line(diagnosis.hook.advice)}")
    if diagnosis.importable:
        count = len(diagnosis.importable)
        print(
            f"Harness memory: {counted(count, 'record')} in Claude Code's memory files "
            f"{agreeing(count, 'has', 'have')} no lazy counterpart; {IMPORT_HINT}:"
        )
        # One a line: a name may hold a comma.
        for name in diagnosis.importable[:5]:
            print(f"  {visible_line(name)}")
        if count > 5:
            print(f"  … and {count - 5} more")
