"""Edit a JSON document's text in place: only what changes is rewritten, byte for byte.

`lazy init --claude-code` adds a few keys to files a team commits (`.claude/settings.json`,
`.mcp.json`). Dumping the whole document again would reindent it, drop a missing final
newline, turn CRLF into LF and escape what the actor wrote raw: a diff of every line. So
`rewrite` takes the text as it is and the value it should hold, and splices in one edit at a
time: a member or item removed with the separator that went with it, a value replaced where
it stands, a member or item added after the last one with the whitespace, indentation,
key separator and line ending its neighbours use. Everything else keeps its bytes. Removing
what was added gives back the text it was added to.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WHITESPACE = " \t\n\r"
_SCALAR = json.JSONDecoder()
_MAX_EDITS = 1_000
"""More edits than any real difference needs: the bound that keeps a bug from looping."""


@dataclass
class _Node:
    """A value's place in the text: [start, end), and for a container its entries."""

    start: int
    end: int
    entries: list[_Entry] = field(default_factory=list)
    """An object's members or an array's items, in order (empty for a scalar)."""


@dataclass
class _Entry:
    """One member (key not None) or item: where it begins (its key, or the value itself)."""

    key: str | None
    begin: int
    value: _Node


def new_text(value: Any) -> str:
    """A new file's text: two-space indentation, the characters as they are, a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def rewrite(text: str, value: Any) -> str:
    """text, edited so that it holds value, with every part that stays the same kept as is."""
    for _ in range(_MAX_EDITS):
        root = _parse(text)
        edit = _first_edit(text, root, json.loads(text), value)
        if edit is None:
            return text
        start, end, replacement = edit
        text = text[:start] + replacement + text[end:]
    raise ValueError("the JSON text did not converge on the value")  # pragma: no cover


def _first_edit(text: str, node: _Node, old: Any, new: Any) -> tuple[int, int, str] | None:
    """The first splice that brings the text at node from old closer to new, None if equal."""
    if old == new:
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        return _object_edit(text, node, old, new)
    if isinstance(old, list) and isinstance(new, list):
        return _array_edit(text, node, old, new)
    return node.start, node.end, _render(text, node.start, new)


def _object_edit(
    text: str, node: _Node, old: dict[str, Any], new: dict[str, Any]
) -> tuple[int, int, str] | None:
    # The last entry of a key is its value, as json.loads reads a duplicated key.
    entries = {entry.key: index for index, entry in enumerate(node.entries)}
    for key in old:
        if key not in new:
            return _removal(node, entries[key])
    for key in old:
        if old[key] != new[key]:
            return _first_edit(text, node.entries[entries[key]].value, old[key], new[key])
    key = next(key for key in new if key not in old)
    return _addition(text, node, json.dumps(key, ensure_ascii=False), new[key])


def _array_edit(
    text: str, node: _Node, old: list[Any], new: list[Any]
) -> tuple[int, int, str] | None:
    index = next(
        (i for i, (was, now) in enumerate(zip(old, new, strict=False)) if was != now),
        min(len(old), len(new)),
    )
    if len(old) > len(new):
        return _removal(node, index)
    if len(old) < len(new):
        if index == len(old):
            return _addition(text, node, None, new[index])
        return _insertion(text, node, index, new[index])
    return _first_edit(text, node.entries[index].value, old[index], new[index])


def _removal(node: _Node, index: int) -> tuple[int, int, str]:
    """Take out an entry with the separator that joins it to its neighbours."""
    entries = node.entries
    if len(entries) == 1:
        return node.start + 1, node.end - 1, ""
    if index == len(entries) - 1:
        # The last one goes with the comma before it: `a,<ws>b` becomes `a`.
        return entries[index - 1].value.end, entries[index].value.end, ""
    # Any other goes with the comma after it, up to where the next one begins.
    return entries[index].begin, entries[index + 1].begin, ""


def _addition(text: str, node: _Node, key: str | None, value: Any) -> tuple[int, int, str]:
    """Add an entry after the last one, spaced as that one is from what precedes it."""
    separator = _key_separator(text, node)
    if not node.entries:
        if not _multiline(text):
            return node.start + 1, node.end - 1, _entry(key, separator, _compact(text, value))
        outer = _line_indent(text, node.start)
        inner = outer + _indent_unit(text)
        newline = _newline(text)
        entry = _entry(key, separator, _render_at(text, inner, value))
        return node.start + 1, node.end - 1, f"{newline}{inner}{entry}{newline}{outer}"
    last = node.entries[-1]
    before = text[_entry_opening(text, node, len(node.entries) - 1) : last.begin]
    if "\n" in before:
        rendered = _render_at(text, before[before.rindex("\n") + 1 :], value)
        return last.value.end, last.value.end, "," + before + _entry(key, separator, rendered)
    rendered = _compact(text, value)
    return (
        last.value.end,
        last.value.end,
        _item_separator(text, node) + _entry(key, separator, rendered),
    )


def _insertion(text: str, node: _Node, index: int, value: Any) -> tuple[int, int, str]:
    """Add an item before item index, spaced as that one is from what precedes it."""
    begin = node.entries[index].begin
    before = text[_entry_opening(text, node, index) : begin]
    if "\n" in before:
        rendered = _render_at(text, before[before.rindex("\n") + 1 :], value)
        return begin, begin, rendered + "," + before
    return begin, begin, _compact(text, value) + _item_separator(text, node)


def _compact(text: str, value: Any) -> str:
    """value on one line, spaced as the text spaces its one-line values (`, ` and `: `)."""
    items = re.search(r"(,[ \t]*)\S", text)
    return json.dumps(
        value,
        ensure_ascii=False,
        separators=(items.group(1) if items else ", ", _document_key_separator(text)),
    )


def _entry(key: str | None, separator: str, rendered: str) -> str:
    return rendered if key is None else f"{key}{separator}{rendered}"


def _render(text: str, at: int, value: Any) -> str:
    """value to stand where a value starts at `at`, in the text's style."""
    if not _multiline(text):
        return _compact(text, value)
    return _render_at(text, _line_indent(text, at), value)


def _render_at(text: str, indent: str, value: Any) -> str:
    """value laid out as the text lays out its values, on lines indented from indent."""
    if not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False)
    dumped = json.dumps(
        value,
        ensure_ascii=False,
        indent=_indent_unit(text),
        separators=(",", _document_key_separator(text)),
    )
    return dumped.replace("\n", _newline(text) + indent)


def _entry_opening(text: str, node: _Node, index: int) -> int:
    """Where the whitespace before entry index starts: after the comma, or the bracket."""
    if index == 0:
        return node.start + 1
    return text.index(",", node.entries[index - 1].value.end) + 1


def _key_separator(text: str, node: _Node) -> str:
    """What stands between a key and its value in this object: as in the text, `: ` at first."""
    for entry in node.entries:
        if entry.key is not None:
            return text[entry.begin + len(_raw_key(text, entry.begin)) : entry.value.start]
    return _document_key_separator(text)


def _document_key_separator(text: str) -> str:
    found = re.search(r'"(?:[^"\\]|\\.)*"([ \t]*:[ \t]*)', text)
    return found.group(1) if found else ": "


def _item_separator(text: str, node: _Node) -> str:
    """What stands between two entries on one line: as in the text, `, ` at first."""
    if len(node.entries) > 1:
        return text[node.entries[0].value.end : node.entries[1].begin]
    items = re.search(r"(,[ \t]*)\S", text)
    return items.group(1) if items else ", "


def _raw_key(text: str, begin: int) -> str:
    _, end = _SCALAR.raw_decode(text, begin)
    return text[begin:end]


def _multiline(text: str) -> bool:
    """Whether values go on lines of their own: as the document has them, or, in a document
    that is only `{}` or `[]`, as a new file has them."""
    return "\n" in text.strip(_WHITESPACE) or json.loads(text) in ({}, [])


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str:
    """One level of the text's indentation: a tab, or the fewest spaces a line is indented by."""
    indents = re.findall(r"\n([ \t]+)\S", text)
    if any(indent.startswith("\t") for indent in indents):
        return "\t"
    return " " * min((len(indent) for indent in indents), default=2)


def _line_indent(text: str, at: int) -> str:
    """The whitespace that begins the line holding position at."""
    start = text.rfind("\n", 0, at) + 1
    line = text[start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _parse(text: str) -> _Node:
    """Where every value of the document is (the text is known to be valid JSON)."""
    node, _ = _value(text, _skip(text, 0))
    return node


def _value(text: str, at: int) -> tuple[_Node, int]:
    opening = text[at]
    if opening not in "{[":
        _, end = _SCALAR.raw_decode(text, at)
        return _Node(at, end), end
    closing = "}" if opening == "{" else "]"
    node = _Node(at, at)
    at = _skip(text, at + 1)
    while text[at] != closing:
        begin, key = at, None
        if opening == "{":
            key, at = _SCALAR.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
        value, at = _value(text, at)
        node.entries.append(_Entry(key, begin, value))
        at = _skip(text, at)
        if text[at] == ",":
            at = _skip(text, at + 1)
    node.end = at + 1
    return node, at + 1


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at
