"""The web view's pages: hostile stored text is shown escaped and visible, never as markup."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compacting import CompactStatus
from lazy_memory.engine.context import Role, launch_context, unavailable_context
from lazy_memory.engine.doctor import diagnose
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    HistoryEntry,
    Operation,
    Record,
    RecordType,
)
from lazy_memory.engine.search_model import SearchHit
from lazy_memory.engine.search_snippets import MARK_END, MARK_START
from lazy_memory.rpc.web import history, pages
from lazy_memory.rpc.web.markup import CONTENT_SECURITY_POLICY

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
HOSTILE_NAME = "evil\x1b]0;owned\x07\u202eexe.txt<script>alert(1)</script>"
HOSTILE_DESCRIPTION = "clear \x1b[2J<img src=x onerror=alert(1)> \u200b&amp;"
HOSTILE_BODY = '<script>alert("body")</script>\r\n\x9b31m "quoted" & \u202etxt.exe'
ACTOR = Actor(kind=ActorKind.HUMAN, detail="mallory\x1b[0m<i>")
_TAG = re.compile(r"<(script|img|i|b)\b", re.IGNORECASE)


def _entry(revision: int, operation: Operation = Operation.SAVE, body: str = HOSTILE_BODY):
    return HistoryEntry(
        name=HOSTILE_NAME,
        type=RecordType.PROJECT,
        description=HOSTILE_DESCRIPTION,
        body=body,
        revision=revision,
        operation=operation,
        actor=ACTOR,
        at=AT,
    )


def _record() -> Record:
    return Record(
        name=HOSTILE_NAME,
        type=RecordType.PROJECT,
        description=HOSTILE_DESCRIPTION,
        body=HOSTILE_BODY,
        revision=3,
        updated_at=AT,
        updated_by=ACTOR,
    )


def _index() -> list[IndexEntry]:
    return [IndexEntry(HOSTILE_NAME, RecordType.PROJECT, HOSTILE_DESCRIPTION, 3, AT)]


def _assert_safe(document: str) -> None:
    """No stored control or bidi character got through, nor any markup but the page's own."""
    main = document.split('<main id="content">', 1)[1]
    for character in ("\x1b", "\x07", "\x9b", "\u202e", "\u200b", "\r"):
        assert character not in document, repr(character)
    assert not _TAG.search(main), _TAG.search(main)
    assert "<script" not in document.split("</head>", 1)[1]


def _pages() -> dict[str, str]:
    records = _index()
    compact = Compact(
        preamble="# Project memory",
        summary=f"Summary naming {HOSTILE_NAME}\n",
        generator="mechanical\x1b[31m",
        generated_at=AT,
        generated_by=ACTOR,
        watermark={HOSTILE_NAME: 1},
    )
    status = CompactStatus(
        compact=compact,
        covered=1,
        bytes_with=100,
        bytes_without=120,
        written_since=[_record()],
        removed_since=[HOSTILE_NAME + "-gone"],
    )
    entries = [_entry(1), _entry(2, Operation.REMOVE), _entry(3, body="revived")]
    hit = SearchHit(
        name=HOSTILE_NAME,
        type=RecordType.PROJECT,
        description=HOSTILE_DESCRIPTION,
        snippet=f"<b>{MARK_START}alert{MARK_END}</b> \x1b[2J {MARK_END}{MARK_START}",
        score=1.0,
    )
    return {
        "index": pages.index_page(launch_context(Role.BUILDER, records, None, [], 4096), records),
        "compacted index": pages.index_page(
            launch_context(Role.AGENT, records, compact, [HOSTILE_NAME], 4096), records
        ),
        "unavailable": pages.index_page(
            unavailable_context(Role.AGENT, "cannot open <db>\x1b[2J", 4096), []
        ),
        "record": history.record_page(HOSTILE_NAME, entries, _record(), (1, 3)),
        "removed record": history.record_page(HOSTILE_NAME, entries[:2], None, (1, 2)),
        "search": pages.search_page(HOSTILE_NAME, [hit], None),
        "search error": pages.search_page("x", None, "bad term <b>\u202e"),
        "compact": pages.compact_page(status),
        "doctor": pages.doctor_page(
            diagnose(records, compact, [], 10, AT, importable=[HOSTILE_NAME])
        ),
        "not found": history.not_found_page(HOSTILE_NAME),
    }


@pytest.mark.parametrize("name", list(_pages()))
def test_every_page_escapes_hostile_stored_text(name: str) -> None:
    _assert_safe(_pages()[name])


def test_a_hostile_name_reads_as_its_visible_escapes() -> None:
    document = _pages()["record"]
    shown = html.escape(r"evil\x1b]0;owned\x07\u202eexe.txt<script>alert(1)</script>")
    assert f'<h1 id="name">{shown}</h1>' in document
    assert html.escape(r'<script>alert("body")</script>\r') in document
    assert r"\x9b31m" in document


def test_the_index_page_is_the_renderers_text_with_names_linked() -> None:
    records = _index()
    context = launch_context(Role.BUILDER, records, None, [], 4096)
    document = pages.index_page(context, records)
    section = document.split('id="section">', 1)[1].split("</pre>", 1)[0]
    unlinked = html.unescape(re.sub(r"<a [^>]*>|</a>", "", section))
    assert unlinked == context.text
    assert 'href="/record?name=evil%1B%5D0%3Bowned%07%E2%80%AEexe.txt%3Cscript%3E' in section


def test_the_unavailable_marker_is_what_launches_get() -> None:
    document = _pages()["unavailable"]
    assert "MEMORY INDEX UNAVAILABLE (cannot open &lt;db&gt;\\x1b[2J)" in document
    assert "The store cannot be read" in document


def test_search_marks_stay_balanced_whatever_the_snippet_holds() -> None:
    document = _pages()["search"]
    snippet = document.split('class="snippet">', 1)[1].split("</span>", 1)[0]
    assert snippet.count("<mark>") == snippet.count("</mark>") == 2
    assert "&lt;b&gt;<mark>alert</mark>&lt;/b&gt;" in snippet


def test_the_diff_shows_a_removal_and_a_revival() -> None:
    entries = [_entry(1), _entry(2, Operation.REMOVE), _entry(3, body="revived")]
    labels = [history.change_label(entries, index) for index in range(3)]
    assert labels == ["created", "removed", "revived"]
    document = history.record_page(HOSTILE_NAME, entries, _record(), (1, 2))
    assert '<span class="del">-state: live</span>' in document
    assert '<span class="add">+state: removed</span>' in document


def test_doctor_draws_the_size_against_the_budget() -> None:
    assert 'class="bar over"' in pages.size_bar(150, 100)
    assert 'width="1000"' in pages.size_bar(150, 100)
    assert 'x1="667"' in pages.size_bar(150, 100)
    assert 'class="bar within"' in pages.size_bar(50, 100)
    assert 'class="fill" x="0" y="0" width="500"' in pages.size_bar(50, 100)


def test_pages_carry_no_inline_script_or_style() -> None:
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    for document in _pages().values():
        assert " style=" not in document
        assert re.findall(r"<script[^>]*>", document) == ['<script src="/static/live.js" defer>']
        assert not re.search(r"<[^>]* on[a-z]+=", document)
