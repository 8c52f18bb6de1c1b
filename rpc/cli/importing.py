"""The harness memory import as `lazy doctor --import-memory` and `lazy init` show it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from lazy_memory.rpc.cli.common import UsageError, print_json
from lazy_memory.rpc.cli.progress import ProgressPrinter

if TYPE_CHECKING:
    from lazy_memory.engine.importing import ImportPlan
    from lazy_memory.engine.service import ImportResult, MemoryService

IMPORT_HINT = "run `lazy doctor --import-memory` to import them"


def print_preview(plan: ImportPlan) -> None:
    """Each record to import with its source, then each file left aside and why."""
    if not plan.directories:
        print("No harness memory directories were found for this project.")
        return
    print("Harness memory found in:")
    for directory in plan.directories:
        print(f"  {directory}")
    if plan.records:
        print(f"\nTo import ({len(plan.records)}):")
        for planned in plan.records:
            content = planned.content
            print(f"  {content.name} ({content.type.value})  from {planned.source}")
    else:
        print("\nNothing to import.")
    if plan.already_present:
        print(f"\nAlready in the store, left alone ({len(plan.already_present)}):")
        print("  " + ", ".join(plan.already_present))
    left_aside = [*plan.superseded, *plan.skipped]
    if left_aside:
        print(f"\nSkipped ({len(left_aside)}):")
        for skipped in left_aside:
            print(f"  {skipped.path}: {skipped.reason}")
    for note in plan.notes:
        print(f"\nNote: {note.path}: {note.reason}")
    for name in plan.retyped:
        print(
            f"\nNote: {name} has a type outside the four; it is stored as project, its "
            "original type kept in its provenance."
        )


async def run_import(service: MemoryService, *, yes: bool, as_json: bool) -> int:
    """Preview, confirm (unless yes), import, and report; never imports unconfirmed."""
    preview = await service.import_memory(apply=False)
    if not as_json:
        print_preview(preview.plan)
    if not preview.plan.records:
        if as_json:
            print_json(preview.model_dump(mode="json"))
        return 0
    if not yes:
        if not sys.stdin.isatty():
            if as_json:
                print_json(preview.model_dump(mode="json"))
            print(
                f"\nNothing imported: standard input is not a terminal, so there is no one to "
                f"confirm. Rerun with --yes to import these {len(preview.plan.records)} records.",
                file=sys.stderr,
            )
            return 0
        if not confirm(f"\nImport these {len(preview.plan.records)} records? [y/N] "):
            print("Nothing imported.")
            return 0
    result = await service.import_memory(apply=True, progress=ProgressPrinter("importing"))
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _report(result)
    return 0


def _report(result: ImportResult) -> None:
    from lazy_memory.engine.records import DESCRIPTION_MAX_LENGTH

    print(f"\nImported {len(result.imported)} record(s), attributed to system:harness-import.")
    long = result.plan.long_descriptions
    if long:
        print(
            f"Hint: {len(long)} imported description(s) are over {DESCRIPTION_MAX_LENGTH} "
            f"characters (kept verbatim); shorten them with `lazy memory save NAME -d`: "
            + ", ".join(long)
        )


def confirm(question: str) -> bool:
    """Ask a yes/no question on the terminal; only y or yes is a yes."""
    try:
        answer = input(question)
    except EOFError:
        raise UsageError("no answer on standard input; nothing imported") from None
    return answer.strip().lower() in ("y", "yes")
