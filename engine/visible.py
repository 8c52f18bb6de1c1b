r"""Stored text made safe to show: controls, DEL, C1 and format characters escaped visibly.

Stored text is hostile (docs/architecture.md, Injection): a name, description or body may
hold a terminal control sequence (`\x1b[2J`, an OSC window title `\x1b]0;title\x07`), a
backspace or carriage return that overwrites what a line showed, NUL, a C1 control (`\x9b`
is a one-byte CSI), a right-to-left override, or zero-width and other format characters that
make text read as something it is not, to a person or a model. Every human and prompt output
passes stored text through one of the two functions here; the stored text never changes
(`--json` and `lazy memory show --raw` give it verbatim).

An escaped character is spelled as Python's repr spells it: `\t`, `\n`, `\r`, `\xNN` below
U+0100 (`\x1b`, `\x7f`, `\x85`), `\uNNNN` (`\u202e`, `\u200b`), `\UNNNNNNNN` above (`\U000e0041`,
a tag character). The two rules:

- visible_line, for one-line fields (names, descriptions, snippets, actors, error text): every
  character of a C category (Cc controls, Cf format, Co private use, Cn unassigned, Cs
  surrogates) and every line or paragraph separator (Zl, Zp) is escaped: what the name rule
  (engine/names.py) refuses. What is left is printable characters and spaces (Zs: a no-break
  space is legal in a name, so a legal name always reads as itself and can be typed back),
  so a field can neither break its line nor change how the rest of the line reads.
- visible_text, for multi-line text (bodies, a compact's summary): newline and tab are kept;
  every other Cc (C0 including CR, DEL, C1), every Cf, Zl, Zp and Cs character is escaped.
  Other spaces, private-use and unassigned characters stay: they are ordinary text in prose
  (a no-break space, a programming font's glyph) and no terminal acts on them.

A backslash is left as it is. So a stored literal `\x1b` (four printable characters) looks the
same as an escaped ESC: an actor can make text *look* as if it held a control, never make
it hold one, and it then shows exactly the characters it holds. Escaping backslashes as well
would tell the two apart, at the cost of doubling every backslash of every Windows path,
regular expression and LaTeX snippet people read in bodies; `--raw` and `--json` settle any
doubt. It also makes both functions idempotent (escaped text has nothing left to escape), so
a renderer may apply them at every layer without double escapes.
"""

from __future__ import annotations

import re

_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""What visible_text escapes in ASCII text: every C0 control but tab and newline, and DEL."""
_KEPT_IN_TEXT = frozenset("\n\t")
_ESCAPED_IN_TEXT = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
"""The Unicode categories visible_text escapes (minus the tab and newline it keeps)."""
_KEPT_IN_LINE = "Zs"
"""The one category str.isprintable() refuses that visible_line keeps: spaces."""
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def visible_line(text: str) -> str:
    """Text for one line of output: everything but printable characters and spaces escaped."""
    # One scan at C speed for the ordinary case: the name or description of every index line.
    if text.isprintable():
        return text
    from unicodedata import category

    return "".join(
        char if char.isprintable() or category(char) == _KEPT_IN_LINE else escape(char)
        for char in text
    )


def visible_text(text: str) -> str:
    """Multi-line text for output: tab and newline kept, controls and format characters escaped."""
    if text.isascii():
        if _ASCII_CONTROL.search(text) is None:
            return text
        return _ASCII_CONTROL.sub(lambda match: escape(match.group()), text)
    # Printable once its tabs and newlines are blanked means nothing to escape, found at C
    # speed; only text that fails looks at its characters one by one.
    probe = text.replace("\n", " ")
    if "\t" in probe:
        probe = probe.replace("\t", " ")
    if probe.isprintable():
        return text
    from unicodedata import category

    return "".join(
        escape(character)
        if not character.isprintable()
        and character not in _KEPT_IN_TEXT
        and category(character) in _ESCAPED_IN_TEXT
        else character
        for character in text
    )


SHOWN_LENGTH = 60
"""The characters of a name a message quotes before it cuts it."""


def shown_name(name: str) -> str:
    """A name quoted for a message: every unprintable character escaped, a long one cut."""
    if len(name) <= SHOWN_LENGTH:
        return repr(name)
    return f"{name[:SHOWN_LENGTH]!r}… ({len(name)} characters)"


def printable_json(text: str) -> str:
    """JSON text (as json.dumps writes it, indented or not) with every character that is not
    printable written as a JSON escape: C1 controls, DEL, format and separator characters.

    json.dumps escapes only C0 controls, so `--json` would print an 8-bit CSI (U+009B) raw for a
    terminal to act on. A JSON escape is lossless: a reader gets the stored text back exactly.
    Outside strings JSON is ASCII, spaces and newlines, which are left as they are.
    """
    if text.replace("\n", " ").isprintable():
        return text
    return "".join(
        character if character.isprintable() or character == "\n" else _json_escape(character)
        for character in text
    )


def _json_escape(character: str) -> str:
    code = ord(character)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells what lies beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape(character: str) -> str:
    """One character's visible escape, spelled as Python's repr spells it."""
    short = _SHORT.get(character)
    if short is not None:
        return short
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
