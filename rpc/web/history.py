"""A record's page: its content, the timeline of its revisions, and the diff of any two.

The timeline is the name's history as the engine keeps it (docs/architecture.md, Records):
every write with its revision, actor and time, a removal (tombstone) and a later revival
shown as such. The diff compares two revisions' whole content (state, type, description,
body) with difflib, rendered here on the server: a tombstone's state line reads `removed`,
so a diff across a removal or a revival says so.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from urllib.parse import quote

from lazy_memory.engine.records import HistoryEntry, Operation, Record
from lazy_memory.engine.visible import visible_line, visible_text
from lazy_memory.rpc.web.markup import attribute, line, page, table, text, when

CONTEXT_LINES = 3
"""Unchanged lines shown around each change, as `diff -u` shows them."""


def default_pair(entries: Sequence[HistoryEntry]) -> tuple[int, int] | None:
    """The revisions compared when none are chosen: the last two, if there are two."""
    if len(entries) < 2:
        return None
    return entries[-2].revision, entries[-1].revision


def record_page(
    name: str,
    entries: Sequence[HistoryEntry],
    live: Record | None,
    pair: tuple[int, int] | None,
) -> str:
    """The page of a name with history: its content now, its timeline, the chosen diff."""
    last = entries[-1]
    if live is not None:
        state = (
            f'<p class="state live" id="state">Live at revision {live.revision}, updated '
            f"{when(live.updated_at)} by {line(str(live.updated_by))}.</p>"
        )
        shown: Record | HistoryEntry = live
    else:
        state = (
            f'<p class="state removed" id="state">Removed at revision {last.revision}, '
            f"{when(last.at)} by {line(str(last.actor))}: its history stays, and "
            "<code>lazy memory save</code> revives it. Its last content:</p>"
        )
        shown = last
    facts = table(
        ["type", "description"],
        [[shown.type.value, line(shown.description)]],
        css="facts",
    )
    original = shown.provenance.original_name if shown.provenance else None
    if original is not None:
        facts += f"<p>Imported as {line(original)}.</p>"
    body = (
        f'<h1 id="name">{line(name)}</h1>{state}{facts}'
        f'<pre class="body" id="body">{text(shown.body)}</pre>'
        f"<h2>Revisions</h2>{_timeline(name, entries, pair)}{_diff_section(entries, pair)}"
    )
    return page(line(name), body)


def not_found_page(name: str) -> str:
    """The page of a name that was never written."""
    return page(
        "No such record",
        f'<h1>No such record</h1><p class="error">No record named {line(name)} has ever been '
        "written.</p>",
    )


def change_label(entries: Sequence[HistoryEntry], index: int) -> str:
    """What the write at index did to the name: created, updated, removed, revived, imported."""
    entry = entries[index]
    if entry.operation is Operation.REMOVE:
        return "removed"
    if entry.operation is Operation.IMPORT:
        return "imported"
    if index == 0:
        return "created"
    if entries[index - 1].operation is Operation.REMOVE:
        return "revived"
    return "updated"


def _timeline(name: str, entries: Sequence[HistoryEntry], pair: tuple[int, int] | None) -> str:
    """The revisions, newest first, each with a radio button for either side of the diff."""
    chosen_from, chosen_to = pair if pair is not None else (None, None)
    rows = []
    for index in reversed(range(len(entries))):
        entry = entries[index]
        label = change_label(entries, index)
        rows.append(
            [
                _radio("from", entry.revision, chosen_from),
                _radio("to", entry.revision, chosen_to),
                str(entry.revision),
                f'<span class="op op-{label}">{label}</span>',
                line(str(entry.actor)),
                when(entry.at),
                line(entry.description),
            ]
        )
    return (
        '<form class="timeline" method="get" action="/record">'
        # Percent-encoded: a page holds no stored character raw, not even in a hidden field.
        f'<input type="hidden" name="quoted" value="{attribute(quote(name, safe=""))}">'
        + table(["from", "to", "rev", "what", "who", "when (UTC)", "description"], rows)
        + '<button type="submit" id="compare">Compare</button></form>'
    )


def _radio(side: str, revision: int, chosen: int | None) -> str:
    checked = " checked" if revision == chosen else ""
    return (
        f'<input type="radio" name="{side}" value="{revision}" '
        f'aria-label="{side} revision {revision}" id="{side}-{revision}"{checked}>'
    )


def _diff_section(entries: Sequence[HistoryEntry], pair: tuple[int, int] | None) -> str:
    if pair is None:
        return ""
    by_revision = {entry.revision: entry for entry in entries}
    missing = [revision for revision in pair if revision not in by_revision]
    if missing:
        return f'<p class="error" id="diff">This record has no revision {missing[0]}.</p>'
    before, after = (by_revision[revision] for revision in pair)
    heading = f"<h2>Revision {before.revision} → revision {after.revision}</h2>"
    lines = list(
        difflib.unified_diff(
            content_lines(before),
            content_lines(after),
            f"revision {before.revision}",
            f"revision {after.revision}",
            n=CONTEXT_LINES,
            lineterm="",
        )
    )
    if not lines:
        return f'{heading}<p id="diff" class="same">The two revisions hold the same content.</p>'
    return f'{heading}<pre class="diff" id="diff">{"".join(map(_diff_line, lines))}</pre>'


def content_lines(entry: HistoryEntry) -> list[str]:
    """A revision's content as the lines the diff compares, already made visible."""
    state = "removed" if entry.operation is Operation.REMOVE else "live"
    return [
        f"state: {state}",
        f"type: {entry.type.value}",
        f"description: {visible_line(entry.description)}",
        "",
        *visible_text(entry.body).split("\n"),
    ]


def _diff_line(diff_line: str) -> str:
    if diff_line.startswith(("+++", "---")):
        css = "file"
    elif diff_line.startswith("@@"):
        css = "hunk"
    elif diff_line.startswith("+"):
        css = "add"
    elif diff_line.startswith("-"):
        css = "del"
    else:
        css = "same"
    return f'<span class="{css}">{text(diff_line)}</span>\n'
