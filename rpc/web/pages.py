"""The index, search, compact and doctor pages: the engine's results as HTML, nothing more.

Each function takes what a MemoryService call returned and lays it out; the wording follows
the CLI's (`lazy memory context`, `lazy search`, `lazy memory compact --show`, `lazy doctor`)
so that a reader of either sees the same facts. Every stored string passes through markup.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compacting import CompactStatus
from lazy_memory.engine.context import LaunchContext, Role
from lazy_memory.engine.doctor import Diagnosis
from lazy_memory.engine.index import IndexEntry, index_line, shown_description
from lazy_memory.engine.search_model import SearchHit
from lazy_memory.engine.search_snippets import MARK_END, MARK_START
from lazy_memory.engine.visible import visible_line
from lazy_memory.engine.wording import agreeing, counted
from lazy_memory.rpc.web.markup import line, page, record_link, text, when

_MARKS = re.compile(f"({re.escape(MARK_START)}|{re.escape(MARK_END)})")


def index_page(context: LaunchContext, entries: Sequence[IndexEntry]) -> str:
    """The section a launch of context.role injects, verbatim, its record lines linked."""
    roles = " ".join(
        f'<a href="/?role={role.value}"{" aria-current=page" if role is context.role else ""}>'
        f"{role.value}</a>"
        for role in Role
    )
    if context.available:
        how = "a compact and what is newer" if context.compacted else "the plain index"
        over = " (over: builders get a pointer to doctor)" if context.over_threshold else ""
        facts = (
            f"{context.bytes:,} bytes ({how}); advisory size {context.warn_bytes:,}{over}; "
            f"{len(entries):,} live records."
        )
    else:
        facts = '<strong class="unavailable">The store cannot be read: launches get this marker.'
        facts += "</strong>"
    return page(
        f"Index ({context.role.value})",
        f"<h1>What {_article(context.role)} launch injects</h1>"
        f'<p class="roles">Role: {roles}</p><p class="facts">{facts}</p>'
        f'<pre class="section" id="section">{_linked_section(context.text, entries)}</pre>',
        current="/",
    )


def _article(role: Role) -> str:
    return f"an {role.value}" if role is Role.AGENT else f"a {role.value}"


def _linked_section(section: str, entries: Sequence[IndexEntry]) -> str:
    """The section's text, each line that is a record's index line with its name linked.

    The text itself is the renderer's, character for character: a link only wraps the name.
    The renderer has already made every stored string in it visible, so HTML escaping is all
    that is left to do (visible_text would change nothing: it is idempotent); at 10,000
    records this loop is most of the page's cost.
    """
    names = {index_line(entry): entry.name for entry in entries}
    shown: list[str] = []
    for part in section.split("\n"):
        name = names.get(part)
        if name is None:
            shown.append(escape(part))
            continue
        shown.append(f"- {record_link(name)}{escape(part[len(visible_line(name)) + 2 :])}")
    return "\n".join(shown)


def search_page(query: str, hits: Sequence[SearchHit] | None, error: str | None) -> str:
    """The search form, and the hits of query (None: nothing asked yet) or why it failed."""
    form = (
        '<form class="search" method="get" action="/search">'
        f'<input type="search" name="q" value="{line(query)}" aria-label="query" '
        'placeholder="deploy -preview type:project name:runbook*" autofocus>'
        '<button type="submit">Search</button></form>'
        '<p class="hint">Words must all match; "a phrase"; type:TYPE; name:NAME or '
        "name:PREFIX*; -word or -&quot;phrase&quot; leaves records out; in:memories.</p>"
    )
    if error is not None:
        result = f'<p class="error" id="query-error">{line(error)}</p>'
    elif hits is None:
        result = ""
    elif not hits:
        result = f'<p class="empty">No live record matches {line(query)}</p>'
    else:
        items = "".join(
            f'<li><span class="hit">{record_link(hit.name)} ({hit.type.value}): '
            f"{line(shown_description(hit.description))}</span>"
            f'<span class="snippet">{_marked(hit.snippet)}</span></li>'
            for hit in hits
        )
        result = f'<ol class="hits" id="hits">{items}</ol>'
    return page("Search", f"<h1>Search</h1>{form}{result}", current="/search")


def _marked(snippet: str) -> str:
    """A snippet with the engine's match marks as <mark>, balanced whatever the text holds."""
    out: list[str] = []
    open_mark = False
    for part in _MARKS.split(visible_line(snippet)):
        if part == MARK_START and not open_mark:
            out.append("<mark>")
            open_mark = True
        elif part == MARK_END and open_mark:
            out.append("</mark>")
            open_mark = False
        else:
            out.append(line(part))
    return "".join(out) + ("</mark>" if open_mark else "")


def compact_page(status: CompactStatus) -> str:
    """The compact as `lazy memory compact --show` reports it: coverage, sizes, what is newer."""
    compact = status.compact
    if compact is None:
        body = (
            f"<p>There is no compact: launches get the plain index ({status.bytes_without:,} "
            "bytes). <code>lazy memory compact</code> writes one.</p>"
        )
        return page("Compact", f"<h1>Compact</h1>{body}", current="/compact")
    sizes = (
        f"<p>It covers {counted(status.covered, 'record')}. Launches inject "
        f'<span id="bytes-with">{status.bytes_with:,}</span> bytes with it, '
        f'<span id="bytes-without">{status.bytes_without:,}</span> without.</p>'
    )
    body = f"<h1>Compact</h1><p>{_made(compact)}</p>{sizes}"
    body += f'<pre class="section">{text(compact.summary.rstrip(chr(10)))}</pre>'
    if not status.written_since and not status.removed_since:
        body += "<p>Nothing is outstanding: every record is covered at its current revision.</p>"
    if status.written_since:
        items = "".join(
            f"<li>{record_link(record.name)} ({record.type.value}): "
            f"{line(shown_description(record.description))} (revision {record.revision})</li>"
            for record in status.written_since
        )
        body += (
            f"<h2>Written or updated since the compact ({len(status.written_since)})</h2>"
            f'<ul id="written-since">{items}</ul>'
        )
    if status.removed_since:
        items = "".join(f"<li>{record_link(name)}</li>" for name in status.removed_since)
        body += (
            f"<h2>Removed since the compact ({len(status.removed_since)})</h2>"
            f'<ul id="removed-since">{items}</ul>'
        )
    return page("Compact", body, current="/compact")


def _made(compact: Compact) -> str:
    model = f" ({compact.model})" if compact.model else ""
    return line(
        f"Compact generated {when(compact.generated_at)} by {compact.generated_by} with "
        f"{compact.generator}{model}."
    )


def doctor_page(diagnosis: Diagnosis) -> str:
    """Doctor's findings, the injected size drawn against the advisory size as a bar."""
    margin = diagnosis.bytes - diagnosis.warn_bytes
    verdict = f"over by {margin:,}" if margin > 0 else f"{-margin:,} to spare"
    body = (
        "<h1>Doctor</h1>"
        f'<p id="size">Injected memory: {diagnosis.bytes:,} bytes for '
        f"{counted(diagnosis.record_count, 'record')} (advisory size {diagnosis.warn_bytes:,}: "
        f"{verdict}).</p>{size_bar(diagnosis.bytes, diagnosis.warn_bytes)}"
    )
    if not diagnosis.compact_exists:
        body += "<p>Compact: none; launches get the plain index.</p>"
    else:
        newer, removed = diagnosis.written_since_compact, diagnosis.removed_since_compact
        freshness = (
            "current"
            if not newer and not removed
            else f"{counted(len(newer), 'record')} written and {len(removed)} removed since"
        )
        generated = (
            "" if diagnosis.compact_generated_at is None else when(diagnosis.compact_generated_at)
        )
        body += (
            f"<p>Compact: {line(diagnosis.compact_generator or '')}, generated {generated}; "
            f"{freshness} (the plain index would be {diagnosis.bytes_without_compact:,} "
            "bytes).</p>"
        )
    body += (
        f'<p class="advice remedy-{diagnosis.remedy.value}" id="advice">'
        f"<strong>{diagnosis.remedy.value}</strong>: {line(diagnosis.advice)}</p>"
    )
    if diagnosis.hook is not None:
        body += f"<p>Claude Code hook: {line(diagnosis.hook.advice)}</p>"
    if diagnosis.importable:
        items = "".join(f"<li>{line(name)}</li>" for name in diagnosis.importable)
        count = len(diagnosis.importable)
        body += (
            f"<p>Harness memory: {counted(count, 'record')} in Claude Code's memory files "
            f"{agreeing(count, 'has', 'have')} no lazy counterpart; <code>lazy doctor "
            f"--import-memory</code> imports {agreeing(count, 'it', 'them')}:</p><ul>{items}</ul>"
        )
    return page("Doctor", body, current="/doctor")


def size_bar(size: int, budget: int) -> str:
    """An SVG bar: size against the budget, the budget marked by a line.

    Drawn with SVG geometry, not a style attribute: the Content-Security-Policy allows no
    inline style.
    """
    scale = max(size, budget, 1)
    filled = round(1000 * size / scale)
    mark = round(1000 * budget / scale)
    state = "over" if size > budget else "within"
    return (
        f'<svg class="bar {state}" id="size-bar" viewBox="0 0 1000 24" '
        'preserveAspectRatio="none" role="img" '
        f'aria-label="{size:,} of {budget:,} bytes">'
        '<rect class="track" x="0" y="0" width="1000" height="24"/>'
        f'<rect class="fill" x="0" y="0" width="{filled}" height="24"/>'
        f'<line class="budget" x1="{mark}" y1="0" x2="{mark}" y2="24"/></svg>'
    )
