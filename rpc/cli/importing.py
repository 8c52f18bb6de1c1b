"""The harness memory import as `lazy doctor --import-memory` and `lazy init` show it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from lazy_memory.engine.wording import agreeing, counted
from lazy_memory.rpc.cli.common import print_json
from lazy_memory.rpc.cli.progress import ProgressPrinter
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.engine.importing import ImportPlan, ImportResult
    from lazy_memory.engine.service import MemoryService

IMPORT_HINT = "run `lazy doctor --import-memory` to import them"


def print_preview(plan: ImportPlan) -> None:
    """Each record to import with its source, then each file left aside and why.

    Names, paths and reasons come from files anyone may have written: all made visible.
    """
    from lazy_memory.engine.visible import shown_name
    from lazy_memory.engine.visible import visible_line as shown

    if not plan.directories:
        print("No harness memory directories were found for this project.")
        return
    print("Harness memory found in:")
    for directory in plan.directories:
        print(f"  {shown(directory)}")
    if plan.records:
        print(f"\nTo import ({len(plan.records)}):")
        for planned in plan.records:
            content = planned.content
            print(f"  {shown(content.name)} ({content.type.value})  from {shown(planned.source)}")
    else:
        print("\nNothing to import.")
    if plan.renamed:
        print(
            f"\nRenamed ({len(plan.renamed)}): these names break the name rule, so each record "
            "gets a derived name; the original is kept in its provenance:"
        )
        for renamed in plan.renamed:
            print(f"  {shown(renamed.name)}  from {shown(renamed.path)}")
            print(f"    was {shown_name(renamed.original)}: {shown(renamed.reason)}")
    if plan.already_present:
        print(f"\nAlready in the store, left alone ({len(plan.already_present)}):")
        # One a line: a name may hold a comma.
        for name in plan.already_present:
            print(f"  {shown(name)}")
    left_aside = [*plan.superseded, *plan.skipped]
    if left_aside:
        print(f"\nSkipped ({len(left_aside)}):")
        for skipped in left_aside:
            print(f"  {shown(skipped.path)}: {shown(skipped.reason)}")
    for note in plan.notes:
        print(f"\nNote: {shown(note.path)}: {shown(note.reason)}")
    original_types = {
        planned.content.name: planned.content.provenance.original_type
        for planned in plan.records
        if planned.content.provenance is not None
    }
    for name in plan.retyped:
        found = original_types.get(name)
        print(
            f"\nNote: {shown(name)} has the type {shown_name(found or '')}, outside the four "
            "(user, feedback, project, reference); it is stored as project, its original type "
            "kept in its provenance."
        )


async def run_import(
    service: MemoryService, *, yes: bool, as_json: bool, previewed: bool = False
) -> int:
    """Preview (unless previewed: the caller showed it), confirm (unless yes), import, report."""
    preview = await service.import_memory(apply=False)
    if not as_json and not previewed:
        print_preview(preview.plan)
        _print_large_bodies(preview)
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
                f"confirm. Rerun with --yes to import {these_records(len(preview.plan.records))}.",
                file=sys.stderr,
            )
            return 0
        if not confirm(f"\nImport {these_records(len(preview.plan.records))}? [y/N] "):
            print("Nothing imported.")
            return 0
    result = await service.import_memory(apply=True, progress=ProgressPrinter("importing"))
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _report(result)
    return 0


def these_records(count: int) -> str:
    """The records an import asks about: `this record`, `these 2 records`."""
    return "this record" if count == 1 else f"these {counted(count, 'record')}"


def _report(result: ImportResult) -> None:
    from lazy_memory.engine.records import DESCRIPTION_MAX_LENGTH
    from lazy_memory.engine.visible import visible_line

    imported = counted(len(result.imported), "record")
    print(f"\nImported {imported}, attributed to system:harness-import.")
    long = result.plan.long_descriptions
    if long:
        is_, them, they_are = (
            ("is", "it", "it is") if len(long) == 1 else ("are", "them", "they are")
        )
        print(
            f"Hint: {counted(len(long), 'imported description')} {is_} over "
            f"{DESCRIPTION_MAX_LENGTH} characters (kept verbatim, and by every save that leaves "
            f"{them} as {they_are}); shorten {them} with `lazy memory save NAME -d`:"
        )
        for name in long:
            print(f"  {visible_line(name)}")
    _print_large_bodies(result)


def _print_large_bodies(result: ImportResult) -> None:
    """Name the bodies over the authoring limit: imported verbatim, but a save refuses them."""
    from lazy_memory.engine.visible import visible_line

    large = [name for name in result.large_bodies if name in result.imported or not result.applied]
    if large:
        print(
            f"\nNote: {counted(len(large), 'record')} {agreeing(len(large), 'has', 'have')} a "
            f"body over {result.max_body_bytes:,} bytes "
            f"([memory] max_body_bytes), {'imported' if result.applied else 'to be imported'} "
            "verbatim; a save that rewrites such a body must bring it under the limit:"
        )
        for name in large:
            print(f"  {visible_line(name)}")


def confirm(question: str) -> bool:
    """Ask a yes/no question on the terminal; only y or yes is a yes."""
    try:
        answer = input(question)
    except EOFError:
        raise UsageError("no answer on standard input; nothing imported") from None
    return answer.strip().lower() in ("y", "yes")
