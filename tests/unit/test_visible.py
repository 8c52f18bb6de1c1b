"""Stored text made visible (engine/visible.py): what is escaped, how, and what is kept."""

from __future__ import annotations

import json
import sys
import unicodedata
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.engine.visible import escape, printable_json, visible_line, visible_text

NAME_FORBIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""What the name rule refuses (engine/names.py), which is what a one-line field escapes."""

C0_BUT_TAB_AND_NEWLINE = [chr(code) for code in range(0x20) if chr(code) not in "\t\n"]
C1 = [chr(code) for code in range(0x80, 0xA0)]
FORMAT = ["\u202e", "\u202d", "\u2066", "\u2069", "\u200b", "\u200d", "\u2060", "\ufeff"]
FORMAT += ["\u00ad", "\u061c", "\U000e0041", "\U000e007f"]  # soft hyphen, ALM, tag characters
SEPARATORS = ["\u2028", "\u2029"]


@pytest.mark.parametrize("character", [*C0_BUT_TAB_AND_NEWLINE, "\x7f", *C1, *FORMAT, *SEPARATORS])
def test_every_control_format_and_separator_character_is_escaped_in_both_rules(
    character: str,
) -> None:
    for render in (visible_line, visible_text):
        shown = render(f"a{character}b")
        assert shown == f"a{escape(character)}b"
        assert shown.isascii()
        assert shown.isprintable()


def test_escapes_are_spelled_as_python_repr_spells_them() -> None:
    assert visible_line("\x1b]0;title\x07") == r"\x1b]0;title\x07"
    assert visible_line("\x7f\x85\x9b") == r"\x7f\x85\x9b"
    assert visible_line("\u202eevil") == r"\u202eevil"
    assert visible_line("\U000e0041") == r"\U000e0041"
    assert visible_line("a\tb\nc\rd") == r"a\tb\nc\rd"
    for character in [*C0_BUT_TAB_AND_NEWLINE, *C1, *FORMAT, "\t", "\n", "\xa0"]:
        assert escape(character) == repr(character)[1:-1]


def test_a_one_line_field_keeps_nothing_but_printable_characters_and_spaces() -> None:
    assert visible_line("a b") == "a b"
    assert visible_line("a\tb") == r"a\tb"
    assert visible_line("line\n- fake (user): forged") == r"line\n- fake (user): forged"
    assert visible_line("\ue000 \U0010ffff") == r"\ue000 \U0010ffff"  # private use
    # A space is legal in a name, so a name holding one reads as itself and is typed back.
    assert visible_line("no\xa0break\u3000wide") == "no\xa0break\u3000wide"


def test_multi_line_text_keeps_newlines_tabs_and_ordinary_spaces() -> None:
    body = "# Title\n\tindented\n\nno\xa0break, 全角\u3000space, \ue0b0 glyph\n"
    assert visible_text(body) == body
    assert visible_text("a\r\nb") == "a\\r\nb"  # a CR would return the cursor: shown
    assert visible_text("ok\n\x1b[2Jcleared") == "ok\n\\x1b[2Jcleared"


def test_text_with_nothing_to_escape_is_returned_as_it_is() -> None:
    for text in ["", "plain ascii", "İstanbul ǅ café 日本語 💥", "e\u0301"]:
        assert visible_line(text) is text
        assert visible_text(text) is text


def test_a_backslash_is_left_as_it_is_so_a_literal_escape_reads_as_what_it_holds() -> None:
    # A stored `\x1b` (four printable characters) looks like an escaped ESC and holds none.
    assert visible_line(r"C:\temp\x1b") == r"C:\temp\x1b"
    assert visible_text("\\\x1b") == r"\\x1b"


UNICODE = st.text(st.characters(codec="utf-8"), max_size=80)


@given(UNICODE)
def test_no_control_or_format_character_survives_either_rule(text: str) -> None:
    line, multi = visible_line(text), visible_text(text)
    assert all(c.isprintable() or unicodedata.category(c) == "Zs" for c in line)
    for character in multi:
        category = unicodedata.category(character)
        assert character in "\t\n" or category not in {"Cc", "Cf", "Zl", "Zp", "Cs"}


@given(UNICODE)
def test_both_rules_are_idempotent(text: str) -> None:
    assert visible_line(visible_line(text)) == visible_line(text)
    assert visible_text(visible_text(text)) == visible_text(text)


@given(UNICODE)
def test_escaping_only_replaces_characters_with_their_escapes(text: str) -> None:
    # Everything kept is kept in place: what a person reads is the stored text, spelled out.
    assert visible_line(text) == "".join(
        c if c.isprintable() or unicodedata.category(c) == "Zs" else escape(c) for c in text
    )


def test_the_rules_agree_with_the_unicode_database_on_every_code_point() -> None:
    escaped_in_text = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    for code in range(sys.maxunicode + 1):
        if code % 7 and code > 0x3000:  # every code point below, a sample above
            continue
        character = chr(code)
        category = unicodedata.category(character)
        line_escaped = visible_line(character) != character
        text_escaped = visible_text(character) != character
        assert line_escaped == (category in NAME_FORBIDDEN), hex(code)
        assert text_escaped == (category in escaped_in_text and character not in "\t\n"), hex(code)


def test_every_name_the_name_rule_takes_is_shown_as_itself() -> None:
    # So a model or a person can type back any legal name exactly as an output showed it.
    from lazy_memory.engine.names import name_problem

    for code in range(sys.maxunicode + 1):
        if code % 5 and code > 0x3000:
            continue
        name = f"a{chr(code)}b"
        if name_problem(name) is None:
            assert visible_line(name) == name, hex(code)
        if visible_line(name) != name:
            assert name_problem(name) is not None, hex(code)


@given(UNICODE, UNICODE)
def test_an_index_line_shows_its_name_and_description_made_visible(name: str, text: str) -> None:
    from lazy_memory.engine.index import (
        IndexEntry,
        collapse_whitespace,
        index_line,
        shown_description,
    )
    from lazy_memory.engine.records import RecordType

    assert shown_description(text) == visible_line(collapse_whitespace(text))
    line = index_line(IndexEntry(name, RecordType.USER, text, 1, datetime.now(UTC)))
    assert line == f"- {visible_line(name)} (user): {shown_description(text)}"
    assert line.splitlines() == [line]


@given(st.recursive(st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_printable_json_reads_back_the_same_and_prints_no_control(value: object) -> None:
    for indent in (None, 2):
        text = printable_json(json.dumps(value, indent=indent, ensure_ascii=False))
        assert json.loads(text) == value
        assert all(c.isprintable() or c == "\n" for c in text), text


def test_printable_json_escapes_c1_del_and_format_characters_as_json_does() -> None:
    text = printable_json(json.dumps("\x9b[2J\x7f\u202e\U000e0041 é", ensure_ascii=False))
    assert text == '"\\u009b[2J\\u007f\\u202e\\udb40\\udc41 é"'
