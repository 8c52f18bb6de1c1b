"""Every front-matter value is the text written in the file (#30 point 4).

YAML would shorten (a ` #` comment), retype (`null`, `~`, `yes`, `007`, dates) or replace
(an anchor, alias or tag) what people and models write as plain text; the reader takes the
characters as written (adapters/claude_code/front_matter.py's docstring defines each form).
One table holds every form of YAML scalar and what the record gets; a property test writes
any one-line text after `description:` and reads it back unchanged.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazy_memory.adapters.claude_code.front_matter import parse_memory
from lazy_memory.engine.importing import HarnessScan

ISSUE = (
    "Security allowlist fully resolved 2026-03-24 \u2014 0 vulns, 0 entries, #47 closed, #66 closed"
)

FORMS: dict[str, tuple[str, str]] = {
    # Plain: the characters as written, whatever YAML would make of them.
    "comment": (ISSUE, ISSUE),
    "comment after spaces": ("done  # really", "done  # really"),
    "comment only": ("#47 closed", "#47 closed"),
    "anchor": ("&anchor the text", "&anchor the text"),
    "undefined alias": ("*alias", "*alias"),
    "alias and more": ("*alias then text", "*alias then text"),
    "local tag": ("!tag the text", "!tag the text"),
    "core tag": ("!!str 12", "!!str 12"),
    "null": ("null", "null"),
    "Null": ("Null", "Null"),
    "tilde": ("~", "~"),
    "true": ("true", "true"),
    "yes": ("yes", "yes"),
    "off": ("off", "off"),
    "octal-looking": ("007", "007"),
    "hexadecimal": ("0x1F", "0x1F"),
    "float": ("1e3", "1e3"),
    "infinity": (".inf", ".inf"),
    "not a number": ("-.NaN", "-.NaN"),
    "underscored": ("1_000", "1_000"),
    "sexagesimal": ("1:20", "1:20"),
    "date": ("2026-03-24", "2026-03-24"),
    "timestamp": ("2026-03-24T05:06:07Z", "2026-03-24T05:06:07Z"),
    "merge key": ("<<", "<<"),
    "a colon": ("Note: use X", "Note: use X"),
    "a dash": ("- not a list", "- not a list"),
    "a directive sign": ("%TAG is not one", "%TAG is not one"),
    "reserved": ("`tick` and @at", "`tick` and @at"),
    "flow sequence": ("[a,  b] # c", "[a,  b] # c"),
    "flow mapping": ("{a: 1}", "{a: 1}"),
    "continued": ("first\n  second\n\n  fourth", "first\nsecond\n\nfourth"),
    "a C1 control": ("caf\u0080e # x", "caf\u0080e # x"),
    # Quoted: what YAML means by the quotes.
    "double quoted": ('"say \\"hi\\" \\u00e9\\tx"', 'say "hi" \u00e9\tx'),
    "single quoted": ("'it''s # not a comment'", "it's # not a comment"),
    "quoted then a comment": ('"quoted" # a comment', "quoted"),
    "quoted, a control inside": ('"q\u0080"', '"q\u0080"'),
    # Block: the lines as written, the block's indentation removed, no final line break.
    "literal": ("|\n  line 1\n    indented\n\n  line 4\n", "line 1\n  indented\n\nline 4"),
    "literal, strip": ("|-\n  a\n  b", "a\nb"),
    "literal, keep": ("|+\n  a\n\n", "a"),
    "literal, indented": ("|2\n   a\n  b", " a\nb"),
    "folded": (">\n  folded\n  text\n", "folded\ntext"),
    "folded, header comment": (">- # note\n  a # b\n", "a # b"),
}


def read(front_matter: str, body: str = "The body's first line\n") -> tuple[str, HarnessScan]:
    scan = HarnessScan()
    memory = parse_memory("/m/x.md", f"---\n{front_matter}\n---\n{body}", 0.0, scan)
    return memory.description, scan


@pytest.mark.parametrize(("written", "expected"), FORMS.values(), ids=list(FORMS))
def test_every_form_of_value_is_read_as_written(written: str, expected: str) -> None:
    description, scan = read(f"name: n\ndescription: {written}\ntype: project")

    assert description == expected
    assert scan.notes == []


@pytest.mark.parametrize(("written", "expected"), FORMS.values(), ids=list(FORMS))
def test_every_field_reads_every_form_alike(written: str, expected: str) -> None:
    scan = HarnessScan()
    text = (
        f"---\nname: {written}\ntype: {written}\nmetadata:\n  originSessionId: "
        f"{written.replace(chr(10), chr(10) + '  ')}\n---\nbody\n"
    )

    memory = parse_memory("/m/x.md", text, 0.0, scan)

    assert (memory.name, memory.type, memory.session_id) == (expected, expected, expected)


def test_nothing_written_is_no_value() -> None:
    assert read("name: n\ndescription:\ntype: user")[0] == "The body's first line"
    assert read("name: n\ndescription:   \ntype: user")[0] == "The body's first line"


YAML_PIECES = st.sampled_from(
    [
        *"#&*!|>'\"%@`:-?,[]{}~ \t\r\\",
        *("\x85", "\u2028", "\x80", "\ufeff", " #", ": "),
        *("null", "yes", "007", "2026-03-24", ".inf"),
    ]
)
"""What YAML makes something of, so the text below comes near it often."""
LINE = (
    st.lists(YAML_PIECES | st.text(st.characters(blacklist_categories=("Cs",))), min_size=1)
    .map("".join)
    .filter(lambda text: "\n" not in text and text == text.strip() and text[:1] not in "\"'|>")
)
"""One line of any text (no surrounding whitespace), but a quoted or block scalar's start."""


@given(LINE)
@example(ISSUE)
@example("a: b # c: d")
@example("&a *a !t")
@example("x\u2028y")
@example("#\x85|")
@example("0\t\x08")
@example("[unclosed")
def test_any_line_after_description_is_read_back_unchanged(text: str) -> None:
    description, scan = read(f"name: n\ndescription: {text}\ntype: user")

    assert description == text
    assert scan.notes == []
