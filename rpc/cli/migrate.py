"""`lazy memory migrate`: move the whole store to another backend, losslessly and resumably."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazy_memory.adapters import BACKENDS, EMBEDDED_BACKENDS, open_storage
from lazy_memory.adapters.config import Settings, load_settings
from lazy_memory.engine.wording import agreeing, counted
from lazy_memory.rpc.cli.common import cli_service, print_json, refuse_agent
from lazy_memory.rpc.cli.progress import ProgressPrinter
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.engine.moving import MoveReport


def add_commands(subcommands: Any, parent: argparse.ArgumentParser) -> None:
    """Add `migrate` under `lazy memory`."""
    migrate = subcommands.add_parser(
        "migrate",
        parents=[parent],
        help="copy the whole store to another backend",
        description="Copy the configured store (every history entry with its actor, time "
        "and provenance, the tombstones, and the compact) into another backend. A target "
        "that already holds the start of the same history is continued, so a re-run is a "
        "no-op; a target holding another history is refused and nothing is written.",
    )
    migrate.add_argument("--to", required=True, choices=BACKENDS, help="the target backend")
    migrate.add_argument("--to-dsn", metavar="DSN", help="the target PostgreSQL database")
    migrate.add_argument(
        "--to-data", metavar="DIR", type=Path, help="the target data directory (sqlite, files)"
    )
    migrate.add_argument(
        "--dry-run", action="store_true", help="say what would be copied; write nothing"
    )
    migrate.set_defaults(run=migrate_store)


async def migrate_store(arguments: argparse.Namespace) -> int:
    """Copy the configured store into the target the flags name, and report what moved."""
    # Before the target is opened: opening one may create its directory.
    refuse_agent("memory migrate")
    settings = load_settings()
    target_settings = _target(settings, arguments)
    async with cli_service() as service:
        target = await open_storage(target_settings)
        try:
            report = await service.move_to(
                target, dry_run=arguments.dry_run, progress=ProgressPrinter("copying")
            )
        finally:
            await target.aclose()
    if arguments.json:
        print_json(report.model_dump(mode="json"))
    else:
        print(_summary(report, f"{settings.backend} to {target_settings.backend}"))
        _print_renamed(report)
    return 0


def _print_renamed(report: MoveReport) -> None:
    """Each name the target holds under a derived name, one a line, the original escaped
    (a second spelling of a name with its code points, as it looks like the first)."""
    from lazy_memory.engine.names import name_problem, spelled
    from lazy_memory.engine.visible import shown_name

    if not report.renamed:
        return
    print(
        f"{counted(len(report.renamed), 'name')} "
        f"{agreeing(len(report.renamed), 'breaks', 'break')} the name rule or "
        f"{agreeing(len(report.renamed), 'is', 'are')} a second spelling of a name and "
        f"{'would be' if report.dry_run else agreeing(len(report.renamed), 'was', 'were')} renamed "
        "in the target, the original kept in each entry's provenance:"
    )
    for original, derived in report.renamed.items():
        shown = shown_name(original) if name_problem(original) else spelled(original)
        print(f"  {shown} -> {derived}")


def _target(settings: Settings, arguments: argparse.Namespace) -> Settings:
    """The settings of the target store: the configured ones, changed as the flags say."""
    if arguments.to_dsn is not None and arguments.to != "postgres":
        raise UsageError("--to-dsn is for --to postgres")
    if arguments.to_data is not None and arguments.to not in EMBEDDED_BACKENDS:
        raise UsageError(f"--to-data is for --to {' or --to '.join(EMBEDDED_BACKENDS)}")
    target = settings._replace(
        backend=arguments.to,
        pg_dsn=arguments.to_dsn or settings.pg_dsn,
        data_dir=(arguments.to_data or settings.data_dir).resolve(),
    )
    if target.backend == "postgres" and target.pg_dsn is None:
        raise UsageError("--to postgres needs the database: give --to-dsn DSN")
    if target.backend != settings.backend:
        return target
    if target.backend in EMBEDDED_BACKENDS and target.data_dir != settings.data_dir.resolve():
        return target
    if target.backend == "postgres" and target.pg_dsn != settings.pg_dsn:
        return target
    flag = {"postgres": " --to-dsn DSN", "remote": ""}.get(target.backend, " --to-data DIR")
    raise UsageError(f"the target is the configured store itself{': give' + flag if flag else ''}")


def _summary(report: MoveReport, route: str) -> str:
    from lazy_memory.engine.moving import CompactMove

    if not report.copied and report.compact in (CompactMove.NONE, CompactMove.UNCHANGED):
        compact = " and the compact" if report.compact is CompactMove.UNCHANGED else ""
        return (
            f"Nothing to copy from {route}: the target already holds all {report.entries} "
            f"history entries{compact}."
        )
    would = report.dry_run
    kept = f" ({report.already_present} already there)" if report.already_present else ""
    copied = [f"{report.copied} of {report.entries} history entries{kept}"]
    if report.compact is CompactMove.COPIED:
        copied.append("the compact")
    summary = f"{'Would copy' if would else 'Copied'} {' and '.join(copied)} from {route}"
    if report.compact is CompactMove.CLEARED:
        summary += f"; {'would clear' if would else 'cleared'} the target's compact, as the "
        summary += "source has none"
    return summary + ("; nothing was written (--dry-run)." if would else ".")
