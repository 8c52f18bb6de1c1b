"""Editing a JSON file's text in place: what changes is spliced in, everything else keeps its
bytes, and taking an addition out gives back the text it was added to, in every style a
settings file comes in."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from lazy_memory.adapters.json_text import new_text, rewrite

USERS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(make test)", "Read(~/é/*)"], "deny": []},
    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]},
    "model": "opus",
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
}
"""A user's settings: nested objects and arrays, an empty one, a non-ASCII string."""


def styled(indent: str | int | None, *, newline: str = "\n", final: bool = True) -> str:
    text = json.dumps(USERS, indent=indent, ensure_ascii=False)
    return text.replace("\n", newline) + (newline if final else "")


STYLES = {
    "two spaces": styled(2),
    "four spaces": styled(4),
    "tabs": styled("\t"),
    "no final newline": styled(2, final=False),
    "CRLF": styled(2, newline="\r\n"),
    "one line": json.dumps(USERS, ensure_ascii=False),
    "one line, no spaces": json.dumps(USERS, ensure_ascii=False, separators=(",", ":")),
    "escaped unicode": json.dumps(USERS, indent=2) + "\n",
    "keys in odd order, prettier arrays": (
        '{\n  "model": "opus",\n  "permissions": {"deny": [], "allow": ["Bash(make test)", '
        '"Read(~/é/*)"]},\n  "hooks": {\n    "PreToolUse": [{"matcher": "Bash", "hooks": '
        '[{"type": "command", "command": "x"}]}]\n  },\n  "$schema": '
        '"https://json.schemastore.org/claude-code-settings.json"\n}\n'
    ),
}

LAZY_HOOK = {"hooks": [{"type": "command", "command": "lazy memory context --hook", "timeout": 30}]}


def add_a_new_key(value: dict[str, Any]) -> None:
    value["autoMemoryEnabled"] = False


def add_into_a_nested_object(value: dict[str, Any]) -> None:
    value["hooks"]["SessionStart"] = [LAZY_HOOK]


def add_to_an_array(value: dict[str, Any]) -> None:
    value["permissions"]["allow"].append("mcp__lazy__lazy_search")


def add_to_an_empty_array(value: dict[str, Any]) -> None:
    value["permissions"]["deny"].append("Read(./.env)")


def change_a_value(value: dict[str, Any]) -> None:
    value["model"] = "sonnet"


def add_a_new_object_tree(value: dict[str, Any]) -> None:
    value["mcpServers"] = {"lazy": {"command": "lazy", "args": ["mcp"], "alwaysLoad": True}}


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    function.__name__: function
    for function in (
        add_a_new_key,
        add_into_a_nested_object,
        add_to_an_array,
        add_to_an_empty_array,
        change_a_value,
        add_a_new_object_tree,
    )
}


def replaced(before: str, after: str) -> str:
    """The part of before that after does not keep: after is before with one splice."""
    prefix = len(next(iter(_common(before, after)), ""))
    suffix = len(next(iter(_common(before[prefix:][::-1], after[prefix:][::-1])), ""))
    return before[prefix : len(before) - suffix]


def _common(first: str, second: str) -> list[str]:
    length = 0
    while length < min(len(first), len(second)) and first[length] == second[length]:
        length += 1
    return [first[:length]]


@pytest.mark.parametrize("edit", EDITS)
@pytest.mark.parametrize("style", STYLES)
def test_an_edit_keeps_every_other_byte_and_its_undoing_gives_the_text_back(
    style: str, edit: str
) -> None:
    text = STYLES[style]
    wanted = copy.deepcopy(USERS)
    EDITS[edit](wanted)

    edited = rewrite(text, wanted)

    assert json.loads(edited) == wanted
    # One splice: nothing of the text is rewritten but the value that changed.
    assert replaced(text, edited) == ("opus" if edit == "change_a_value" else "")
    assert rewrite(edited, USERS) == text
    assert rewrite(edited, wanted) == edited
    if "\r\n" in text:
        assert edited.count("\n") == edited.count("\r\n")
    if "\t" in text:
        assert "\n  " not in edited
    assert ("\\u00e9" in edited) == ("\\u00e9" in text)
    if "\n" not in text.strip():
        assert "\n" not in edited.strip()


def test_a_removal_takes_its_separator_and_nothing_else() -> None:
    text = '{\n    "a": 1,\n    "lazy": {"x": [1, 2]},\n    "b": [\n        3\n    ]\n}'
    for key, expected in (
        ("a", '{\n    "lazy": {"x": [1, 2]},\n    "b": [\n        3\n    ]\n}'),
        ("lazy", '{\n    "a": 1,\n    "b": [\n        3\n    ]\n}'),
        ("b", '{\n    "a": 1,\n    "lazy": {"x": [1, 2]}\n}'),
    ):
        value = json.loads(text)
        del value[key]
        assert rewrite(text, value) == expected
    assert rewrite('{"only": 1}', {}) == "{}"


def test_an_empty_document_grows_as_a_new_file_would_and_shrinks_back() -> None:
    for text in ("{}", "{}\n", "{}\r\n"):
        edited = rewrite(text, {"a": [1]})
        assert json.loads(edited) == {"a": [1]}
        assert edited.strip() == '{\n  "a": [\n    1\n  ]\n}'.replace("\n", _newline(text))
        assert rewrite(edited, {}) == text


def test_an_item_goes_in_where_the_value_wants_it() -> None:
    text = '[\n  "a",\n  "c"\n]\n'

    assert rewrite(text, ["a", "b", "c"]) == '[\n  "a",\n  "b",\n  "c"\n]\n'
    assert rewrite(text, ["z", "a", "c"]) == '[\n  "z",\n  "a",\n  "c"\n]\n'
    assert rewrite('["a", "c"]', ["a", "b", "c"]) == '["a", "b", "c"]'


def test_a_key_given_twice_is_edited_where_json_reads_it() -> None:
    text = '{"a": 1, "a": 2, "b": 3}'

    edited = rewrite(text, {"a": 5, "b": 3})

    assert edited == '{"a": 1, "a": 5, "b": 3}'
    assert json.loads(edited) == {"a": 5, "b": 3}


def test_a_new_file_is_two_space_json_with_its_characters_and_a_final_newline() -> None:
    assert new_text({"b": 1, "a": ["é"]}) == '{\n  "b": 1,\n  "a": [\n    "é"\n  ]\n}\n'


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
