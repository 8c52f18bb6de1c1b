"""How the MCP tools take their arguments: exactly as the JSON has them, or one sentence why not.

A tool's arguments are checked against the input schema its `tools/list` entry declares
(rpc/mcp/catalog.py), so what the model is told and what is enforced cannot drift apart: an
argument the tool does not name is refused (the schema says `additionalProperties: false`), a
value must have the declared JSON type (`"2"` is no page number, `true` is no integer, `1.0` is
a number and not an integer), and the arguments it declares with a default may be left out. A
model reading a validator's whole report guesses; here a mistake is answered with one sentence
naming each wrong argument and what it takes. Standard library only: the schemas use a small
part of JSON Schema (`type`, `anyOf`, `minimum`, `required`, `additionalProperties`), and that
is all this reads.
"""

from __future__ import annotations

import json
from typing import Any

from lazy_memory.engine.visible import visible_line

_SHOWN_VALUE_CHARS = 40
"""A wrong value is quoted back up to this many characters."""
_JSON_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


class ArgumentsRefused(Exception):
    """A tool's arguments do not fit its input schema; the message says which and why."""


def checked_arguments(tool: str, schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """arguments, with the defaults of those left out, if they fit schema; else ArgumentsRefused
    naming each argument that is missing, unknown or wrong, and what it takes."""
    if not isinstance(arguments, dict):
        raise ArgumentsRefused(f"{tool}: the arguments must be an object.")
    properties: dict[str, Any] = schema.get("properties", {})
    problems: list[str] = []
    values: dict[str, Any] = {}
    for argument, declared in properties.items():
        if argument not in arguments:
            if argument in schema.get("required", ()):
                problems.append(
                    f"the argument {argument} is missing: it takes {_expected(declared)}"
                )
            else:
                values[argument] = declared.get("default")
        elif _fits(arguments[argument], declared):
            values[argument] = arguments[argument]
        else:
            problems.append(
                f"the argument {visible_line(argument)} takes {_expected(declared)}, "
                f"not {_shown_value(arguments[argument])}"
            )
    for argument in arguments:
        if argument not in properties:
            known = ", ".join(properties) or "none"
            problems.append(
                f"there is no argument {visible_line(argument)} (the arguments are {known})"
            )
    if problems:
        raise ArgumentsRefused(f"{tool}: " + "; ".join(problems) + ".")
    return values


def _fits(value: Any, declared: dict[str, Any]) -> bool:
    """Whether value is of one of the JSON types declared (strictly: a bool is no integer)."""
    for kind in declared.get("anyOf", [declared]):
        expected = kind.get("type")
        if expected == "null":
            fits = value is None
        elif expected == "string":
            fits = isinstance(value, str)
        elif expected == "integer":
            fits = isinstance(value, int) and not isinstance(value, bool)
        elif expected == "number":
            fits = isinstance(value, int | float) and not isinstance(value, bool)
        elif expected == "boolean":
            fits = isinstance(value, bool)
        else:
            fits = False
        if fits and ("minimum" not in kind or value >= kind["minimum"]):
            return True
    return False


def _expected(declared: dict[str, Any]) -> str:
    """What a property of an input schema takes, in words: "an integer of at least 1"."""
    kinds = []
    for kind in declared.get("anyOf", [declared]):
        text = _JSON_TYPES.get(kind.get("type", ""), "a value")
        if "minimum" in kind:
            text += f" of at least {kind['minimum']}"
        kinds.append(text)
    return " or ".join(kinds)


def _shown_value(value: Any) -> str:
    """A value as JSON spells it, cut short and made visible."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _SHOWN_VALUE_CHARS:
        text = text[: _SHOWN_VALUE_CHARS - 1] + "…"
    return visible_line(text)
