"""`lazy memory list|show|save|rm|history`: the record commands."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lazy_memory.engine.constants import RECORD_TYPE_NAMES
from lazy_memory.rpc.cli import compact, migrate
from lazy_memory.rpc.cli.body import opens_editor, read_body
from lazy_memory.rpc.cli.common import (
    all_read,
    cli_service,
    common_flags,
    print_json,
    refuse_agent,
)
from lazy_memory.rpc.cli.parsing import add_command_group
from lazy_memory.rpc.cli.table import Table, output_width, render
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.engine.records import HistoryEntry
    from lazy_memory.engine.service import MemoryService


def add_commands(commands: Any) -> None:
    """Add `lazy memory` and its subcommands to the top-level command parser."""
    parent = common_flags()
    group = commands.add_parser(
        "memory",
        help="recall and write memory records",
        description="Recall and write the store's records: each has a name, a type, a one-line "
        "description and a markdown body, and every write is kept in its history.",
    )
    subcommands = add_command_group(group)

    listing = subcommands.add_parser(
        "list",
        parents=[parent],
        help="the index of live records",
        description="Print the index of live records: name, type and description (with --json, "
        "every record in full). Records the store holds but cannot read are named on standard "
        "error after the others, with exit status 7; `lazy doctor` says why.",
    )
    listing.set_defaults(run=list_records)

    show = subcommands.add_parser(
        "show",
        parents=[parent],
        help="recall a record and show it in full",
        description="Recall one record and print it in full. Control, DEL and format characters in "
        r"it are shown escaped (\x1b, \u202e); --raw prints the body alone, verbatim, for scripts.",
    )
    show.add_argument("name")
    show.add_argument(
        "--raw", action="store_true", help="print only the body, exactly as stored (no header)"
    )
    show.set_defaults(run=show_record)

    types = ", ".join(RECORD_TYPE_NAMES)
    save = subcommands.add_parser(
        "save",
        parents=[parent],
        help="create or update a record",
        description="Create or update a record. On an update, what you leave out is kept. "
        "The body comes from --body or --body-file (- for standard input); without either, a "
        "save that gives -t or -d keeps the body (a new record's is empty), and one that gives "
        "neither opens $EDITOR on a terminal.",
    )
    save.add_argument("name")
    save.add_argument("-t", "--type", help=f"one of {types} (required for a new record)")
    save.add_argument(
        "-d", "--description", help="one line, at most 200 characters (required when new)"
    )
    body = save.add_mutually_exclusive_group()
    body.add_argument("--body", help="the body text (markdown)")
    body.add_argument(
        "--body-file",
        metavar="FILE",
        help="read the body from FILE; - reads standard input, which is never read otherwise",
    )
    save.add_argument(
        "--if-revision",
        type=int,
        metavar="N",
        help="save only if the record is at revision N (0: only if it is new)",
    )
    save.set_defaults(run=save_record)

    remove = subcommands.add_parser(
        "rm", parents=[parent], help="remove a record (a tombstone; its history stays)"
    )
    remove.add_argument("name")
    remove.set_defaults(run=remove_record)

    history = subcommands.add_parser("history", parents=[parent], help="who wrote what, when")
    history.add_argument("name", nargs="?")
    history.set_defaults(run=show_history)

    compact.add_commands(subcommands, parent)
    migrate.add_commands(subcommands, parent)


async def list_records(arguments: argparse.Namespace) -> int:
    """Print the index: name, type and description of every live record."""
    from lazy_memory.engine.index import shown_description
    from lazy_memory.engine.ports import read_partly
    from lazy_memory.engine.visible import visible_line

    async with cli_service() as service:
        if arguments.json:
            records, unreadable = await read_partly(service.list_records())
            print_json([record.model_dump(mode="json") for record in records])
            return all_read(unreadable)
        # The table shows no bodies: the index read leaves them in the store.
        entries, unreadable = await read_partly(service.index())
    if not entries:
        if not unreadable:
            print(
                'No records yet. Save one with: lazy memory save NAME -t TYPE -d "one line"',
                file=sys.stderr,
            )
        return all_read(unreadable)
    rows = [[visible_line(e.name), e.type.value, shown_description(e.description)] for e in entries]
    table = render(["NAME", "TYPE", "DESCRIPTION"], rows, output_width(), elidable=[0])
    print("\n".join(table.lines))
    if table.shortened:
        print()
        print(_shortened_note(table))
    return all_read(unreadable)


def _shortened_note(table: Table) -> str:
    """What `list` says under a table it cut, wrapped to the width the table fits."""
    import textwrap

    from lazy_memory.engine.wording import counted

    names, descriptions = (
        table.shortened_by_column["NAME"],
        table.shortened_by_column["DESCRIPTION"],
    )
    cut = " and ".join(
        counted(count, noun)
        for count, noun in ((names, "name"), (descriptions, "description"))
        if count
    )
    where = (
        "`lazy memory list --json` prints every name whole, `lazy memory show NAME` a record"
        if names
        else "`lazy memory show NAME` prints it"
    )
    note = f"({cut} shortened with … to fit {table.width} columns; {where} in full)"
    return textwrap.fill(note, table.width, break_on_hyphens=False)


async def show_record(arguments: argparse.Namespace) -> int:
    """Print one record in full, stored text made visible; or, with --raw, its body verbatim."""
    if arguments.raw and arguments.json:
        raise UsageError("--raw and --json are two ways to print the record: give one")
    async with cli_service() as service:
        record = await service.recall(arguments.name)
    if arguments.json:
        print_json(record.model_dump(mode="json"))
        return 0
    if arguments.raw:
        # The stored bytes, whatever the terminal's encoding, with no newline added.
        sys.stdout.flush()
        sys.stdout.buffer.write(record.body.encode("utf-8"))
        sys.stdout.buffer.flush()
        return 0
    from lazy_memory.engine.visible import visible_line, visible_text

    print(f"name:        {visible_line(record.name)}")
    print(f"type:        {record.type.value}")
    print(f"description: {visible_line(record.description)}")
    print(f"revision:    {record.revision}")
    print(f"updated:     {_utc(record.updated_at)} UTC by {visible_line(str(record.updated_by))}")
    print()
    print(visible_text(record.body))
    return 0


async def save_record(arguments: argparse.Namespace) -> int:
    """Create, update or revive a record as the person at the terminal."""
    # Before the store is read and before $EDITOR opens on a body an agent could not save.
    refuse_agent("memory save")
    fields_given = arguments.type is not None or arguments.description is not None
    async with cli_service() as service:
        # The record is read here only for the editor to start from; the save reads it once
        # itself, and its answer says what it did.
        shown = (
            await _editor_body(service, arguments.name)
            if opens_editor(arguments.body, arguments.body_file, fields_given=fields_given)
            else None
        )
        body = read_body(arguments.body, arguments.body_file, shown, fields_given=fields_given)
        record = await service.save(
            arguments.name,
            type=arguments.type,
            description=arguments.description,
            body=body,
            if_revision=arguments.if_revision,
        )
    if arguments.json:
        # As it always was: the record, and `unchanged` when nothing was written.
        print_json(record.model_dump(mode="json", exclude={"outcome"}))
    else:
        from lazy_memory.engine.saving import SaveOutcome
        from lazy_memory.engine.visible import visible_line

        name = visible_line(record.name)
        if record.unchanged:
            print(
                f"unchanged, revision {record.revision}: {name} already holds this type, "
                "description and body, so nothing was written"
            )
        else:
            verb = (
                "replaced the unreadable record"
                if record.outcome is SaveOutcome.REPLACED
                else record.outcome.value
            )
            print(f"{verb} {name} ({record.type.value}), revision {record.revision}")
        if record.name != arguments.name:
            from lazy_memory.engine.names import spelled

            # The two display alike: the code points say which spelling the record keeps.
            print(
                f"{spelled(arguments.name)} is the same name as the record's own spelling, "
                f"{spelled(record.name)}, which it keeps"
            )
    return 0


async def _editor_body(service: MemoryService, name: str) -> str | None:
    """The body $EDITOR starts from: the live record's, else a removed record's last (the
    body a revival keeps), else none."""
    from lazy_memory.engine.errors import UnreadableRecords

    try:
        current = await service.recall_if_live(name)
    except UnreadableRecords:
        return None  # a save that leaves a field out fails on it, as a read does
    return current.body if current is not None else await _removed_body(service, name)


async def _removed_body(service: MemoryService, name: str) -> str | None:
    """The body of name's last live revision when it is a removed record; else None."""
    from lazy_memory.engine.errors import NotFound
    from lazy_memory.engine.saving import tombstone

    try:
        removal = tombstone(await service.history(name))
    except NotFound:
        return None
    return None if removal is None else removal.body


async def remove_record(arguments: argparse.Namespace) -> int:
    """Tombstone a record; its history stays and a later save revives it."""
    refuse_agent("memory rm")
    async with cli_service() as service:
        entry = await service.remove(arguments.name)
    if arguments.json:
        print_json(entry.model_dump(mode="json"))
    else:
        from lazy_memory.engine.visible import visible_line

        print(
            f"removed {visible_line(entry.name)} (revision {entry.revision}); its history "
            "stays, and `lazy memory save` revives it"
        )
    return 0


async def show_history(arguments: argparse.Namespace) -> int:
    """Print every write, oldest first: when, what, which revision, and who."""
    from lazy_memory.engine.index import shown_description
    from lazy_memory.engine.visible import visible_line

    async with cli_service() as service:
        entries = await service.history(arguments.name)
    if arguments.json:
        print_json([entry.model_dump(mode="json") for entry in entries])
        return 0
    if not entries:
        print("No history yet: nothing has been written to this store.", file=sys.stderr)
        return 0
    rows = [
        [
            _utc(entry.at),
            visible_line(entry.name),
            str(entry.revision),
            entry.operation.value,
            visible_line(str(entry.actor)),
            shown_description(entry.description),
        ]
        for entry in entries
    ]
    header = ["WHEN (UTC)", "NAME", "REV", "OP", "WHO", "DESCRIPTION"]
    print("\n".join(render(header, rows, output_width(), elidable=[4, 1]).lines))
    if arguments.name is not None:
        _print_provenance(entries)
    return 0


def _print_provenance(entries: list[HistoryEntry]) -> None:
    """Where each import of one record came from: kept in view however often it was edited."""
    from lazy_memory.engine.records import Operation
    from lazy_memory.engine.visible import shown_name, visible_line

    for entry in entries:
        origin = entry.provenance
        if entry.operation is not Operation.IMPORT or origin is None:
            continue
        facts = [f"from {visible_line(origin.source)}"]
        if origin.original_name is not None:
            facts.append(f"named {shown_name(origin.original_name)} in the file")
        if origin.original_type is not None:
            facts.append(f"typed {shown_name(origin.original_type)} in the file")
        print(
            f"\nRevision {entry.revision} was imported at {_utc(entry.at)} UTC "
            + ", ".join(facts)
            + "."
        )


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
