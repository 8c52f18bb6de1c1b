"""`lazy memory context` and `lazy memory compact`: what launches inject, and compacting it."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lazy_memory.engine.wording import agreeing, counted
from lazy_memory.rpc.cli.common import cli_service, print_json, refuse_agent
from lazy_memory.rpc.cli.context import show_context

if TYPE_CHECKING:
    from lazy_memory.engine.compacting import CompactPlan, CompactStatus
    from lazy_memory.engine.compaction import CompactOutcome
    from lazy_memory.engine.context import LaunchContext


def add_commands(subcommands: Any, parent: argparse.ArgumentParser) -> None:
    """Add `context` (the launch context) and `compact` under `lazy memory`."""
    context = subcommands.add_parser(
        "context",
        parents=[parent],
        help="print the launch context a launch injects",
        description="Print the launch context injected into a builder's or an agent's launch: "
        "the memory index and its preamble. --json adds its size in bytes and the advisory "
        "threshold.",
    )
    context.add_argument("--role", choices=["builder", "agent"], default="builder")
    context.add_argument(
        "--hook",
        action="store_true",
        help="run as Claude Code's SessionStart hook: the role from the environment "
        "(an agent when LAZY_TASK_ID is set), the launch context fitted to what the harness "
        "shows whole, always exit 0",
    )
    context.set_defaults(run=show_context)

    compact = subcommands.add_parser(
        "compact",
        parents=[parent],
        help="summarize the index so launches inject less",
        description="Generate a compact of the index: a model's summary (falling back to the "
        "mechanical one on any failure), or with --mechanical the lossless grouping by type. "
        "A compact that would not shrink the plain index, or would make the injected section "
        "bigger than it is now, is rejected.",
    )
    action = compact.add_mutually_exclusive_group()
    action.add_argument(
        "--mechanical",
        dest="mode",
        action="store_const",
        const="mechanical",
        help="group by type, every name and description kept; no model call",
    )
    action.add_argument(
        "--llm",
        dest="mode",
        action="store_const",
        const="llm",
        help="the model's summary only: fail instead of falling back",
    )
    action.add_argument("--show", action="store_true", help="show the compact and what is newer")
    action.add_argument("--clear", action="store_true", help="remove the compact")
    compact.set_defaults(run=compact_index, mode="auto")


async def compact_index(arguments: argparse.Namespace) -> int:
    """Generate, show or clear the compact."""
    from lazy_memory.engine.compaction import Mode
    from lazy_memory.engine.context import Role

    if not arguments.show:
        refuse_agent("memory compact --clear" if arguments.clear else "memory compact")
    mode = Mode(arguments.mode)
    async with cli_service() as service:
        if arguments.show:
            status = await service.compact_status()
            if arguments.json:
                print_json(status.model_dump(mode="json"))
            else:
                _print_status(status)
            return 0
        if arguments.clear:
            cleared = await service.clear_compact()
            if arguments.json:
                print_json({"cleared": cleared})
            else:
                print("Cleared the compact." if cleared else "There was no compact to clear.")
            return 0
        plan = await service.compact_plan(mode)
        if not arguments.json:
            print(_plan_line(plan), flush=True)
        outcome = await service.compact(mode)
        hook = await service.launch_context(Role.BUILDER, service.hook_limit_chars)
    if arguments.json:
        print_json({**outcome.model_dump(mode="json"), "hook": _hook_fit(hook)})
    else:
        _print_outcome(outcome)
        print(_hook_line(hook))
    return 0


def _hook_fit(hook: LaunchContext) -> dict[str, object]:
    return {
        "limit_chars": hook.limit_chars,
        "printed_chars": hook.chars,
        "fits": not hook.fitted,
        "listed": hook.listed,
        "records": hook.records,
    }


def _hook_line(hook: LaunchContext) -> str:
    if hook.limit_chars is None:
        return "Claude Code hook: no limit is configured."
    if not hook.fitted:
        return (
            f"It fits Claude Code's hook limit ({hook.chars:,} of {hook.limit_chars:,} "
            "characters): a hook launch shows the whole section."
        )
    return (
        f"It is still over Claude Code's hook limit ({hook.limit_chars:,} characters): a hook "
        f"launch lists {hook.listed:,} of {counted(hook.records, 'record')} and points to "
        "lazy_memory_recall() for the rest; `lazy launch claude` carries the whole section."
    )


def _plan_line(plan: CompactPlan) -> str:
    from lazy_memory.engine.compaction import Mode

    last = (
        "there is no compact yet"
        if plan.last_generated_at is None
        else f"the last compact was generated {_when(plan.last_generated_at)}"
    )
    if plan.generator == "mechanical":
        how = "the mechanical generator (no model call)"
    else:
        how = f"{plan.generator} ({plan.model})"
        if plan.mode is Mode.AUTO:
            how += ", falling back to the mechanical generator if that fails"
    return f"Compacting {counted(plan.record_count, 'record')} with {how}; {last}."


def _print_outcome(outcome: CompactOutcome) -> None:
    from lazy_memory.engine.visible import visible_line

    if outcome.fallback_reason:
        print(f"Used the mechanical generator instead: {visible_line(outcome.fallback_reason)}.")
    if outcome.omitted:
        names = ", ".join(map(visible_line, outcome.omitted))
        print(
            f"The summary left out {counted(len(outcome.omitted), 'record name')}; "
            f"{agreeing(len(outcome.omitted), 'it was', 'they were')} appended verbatim as "
            f"index lines: {names}"
        )
    compact = outcome.compact
    saved = outcome.bytes_without - outcome.bytes_with
    print(
        f"Wrote the {compact.generator} compact of {counted(outcome.record_count, 'record')}: "
        f"launches inject {outcome.bytes_with:,} bytes instead of {outcome.bytes_without:,} "
        f"({saved * 100 // outcome.bytes_without}% smaller)."
    )


def _print_status(status: CompactStatus) -> None:
    from lazy_memory.engine.index import index_line
    from lazy_memory.engine.visible import visible_line, visible_text

    compact = status.compact
    if compact is None:
        print(
            f"There is no compact: launches get the plain index ({status.bytes_without:,} "
            "bytes). `lazy memory compact` writes one."
        )
        return
    model = f" ({compact.model})" if compact.model else ""
    rejected = (
        ""
        if compact.model_rejected is None
        else f", as {compact.model_rejected}'s summary of these records was not accepted"
    )
    # The compact slot is stored text like any other: every part of it is made visible.
    print(
        visible_line(
            f"Compact generated {_when(compact.generated_at)} by {compact.generated_by} with "
            f"{compact.generator}{model}{rejected}."
        )
    )
    print(
        f"It covers {counted(status.covered, 'record')}. Launches inject "
        f"{status.bytes_with:,} bytes with it, {status.bytes_without:,} without."
    )
    print()
    print(visible_text(compact.summary.rstrip("\n")))
    print()
    if not status.written_since and not status.removed_since:
        print("Nothing is outstanding: every record is covered at its current revision.")
        return
    if status.written_since:
        print(f"Written or updated since the compact ({len(status.written_since)}):")
        for record in status.written_since:
            print(index_line(record))
    if status.removed_since:
        print(f"Removed since the compact ({len(status.removed_since)}):")
        for name in status.removed_since:
            print(f"- {visible_line(name)}")


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
