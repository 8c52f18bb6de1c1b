"""`lazy doctor`: what launches inject, how fresh the compact is, and what to do about it."""

from __future__ import annotations

import argparse
from typing import Any

from lazy_memory.engine.doctor import Diagnosis, Remedy
from lazy_memory.rpc.cli.common import cli_service, common_flags, print_json

EXIT_STATUSES = {Remedy.NONE: 0, Remedy.COMPACT: 10, Remedy.CURATE: 11}
"""doctor's exit status by remedy, for scripts: 0 nothing to do, 10 compact, 11 curate."""


def add_commands(commands: Any) -> None:
    """Add `lazy doctor` to the top-level command parser."""
    doctor = commands.add_parser(
        "doctor",
        parents=[common_flags()],
        help="check the injected memory's size and the compact's freshness",
        description="Measure the memory section launches inject against [memory] warn_bytes, "
        "report how stale the compact is, and recommend what helps. Exit status: 0 nothing to "
        "do, 10 run `lazy memory compact`, 11 curate the records or raise warn_bytes.",
    )
    doctor.set_defaults(run=run_doctor)


async def run_doctor(arguments: argparse.Namespace) -> int:
    """Diagnose the store and exit with the remedy's status."""
    async with cli_service() as service:
        diagnosis = await service.doctor()
    if arguments.json:
        print_json(diagnosis.model_dump(mode="json"))
    else:
        _print(diagnosis)
    return EXIT_STATUSES[diagnosis.remedy]


def _print(diagnosis: Diagnosis) -> None:
    margin = diagnosis.bytes - diagnosis.warn_bytes
    verdict = f"over by {margin:,}" if margin > 0 else f"{-margin:,} to spare"
    print(
        f"Injected memory: {diagnosis.bytes:,} bytes for {diagnosis.record_count} records "
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
            else f"{len(newer)} record(s) written and {len(removed)} removed since"
        )
        print(
            f"Compact: {diagnosis.compact_generator}, generated {when}; {freshness} "
            f"(the plain index would be {diagnosis.bytes_without_compact:,} bytes)."
        )
    print(diagnosis.advice)
