"""How the MCP tools take their arguments: exactly as the JSON has them, or one sentence why not.

The SDK validates a tool's arguments leniently (pydantic's lax mode takes "yes" for true and
"2" for 2), drops the names it does not know, parses a string that looks like JSON into a
list or an object, and answers a mistake with pydantic's whole report. A model reading that
report guesses. Here an argument the tool does not name is refused, a value must have the
JSON type the input schema declares (which says so: `additionalProperties: false`), and a
mistake is answered with one sentence naming each wrong argument and what it takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import ConfigDict, ValidationError

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


class _ArgumentsAsSent(FuncMetadata):
    """A tool's argument model, fed the arguments as the client sent them.

    The SDK's own pre-parsing turns a string argument of a non-string field into the JSON it
    spells: a record named `[1]` would reach the tool as a list.
    """

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data


class _ExactTool(Tool):
    """A tool whose wrong arguments are answered with one plain sentence."""

    async def run(
        self,
        arguments: dict[str, Any],
        context: Context[Any, Any],
        convert_result: bool = False,
    ) -> Any:
        """Run the tool, or raise ToolError saying which arguments are wrong and why."""
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as error:
            raise ToolError(explain(self.name, self.parameters, error)) from error
        return await super().run(arguments, context, convert_result)


def exact_tool(tools: list[Tool], **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Decorate a function to append it to tools as a tool taking exact arguments.

    options are Tool.from_function's (annotations, meta, ...).
    """

    def add(function: Callable[..., Any]) -> Callable[..., Any]:
        tool = _ExactTool.from_function(function, **options)
        lenient = tool.fn_metadata.arg_model
        config = ConfigDict(extra="forbid", strict=True)
        exact = cast(
            "type[ArgModelBase]", type(lenient.__name__, (lenient,), {"model_config": config})
        )
        metadata = _ArgumentsAsSent(**{**dict(tool.fn_metadata), "arg_model": exact})
        schema = exact.model_json_schema(by_alias=True)
        tools.append(tool.model_copy(update={"fn_metadata": metadata, "parameters": schema}))
        return function

    return add


def explain(tool: str, schema: dict[str, Any], error: ValidationError) -> str:
    """One sentence: each argument of tool that is missing, unknown or wrong, and what it takes."""
    properties: dict[str, Any] = schema.get("properties", {})
    problems: dict[str, str] = {}
    for problem in error.errors(include_url=False):
        argument = str(problem["loc"][0]) if problem["loc"] else ""
        if argument in problems:  # a union reports each of its types: one problem is enough
            continue
        shown = visible_line(argument)
        if problem["type"] == "extra_forbidden":
            known = ", ".join(properties) or "none"
            problems[argument] = f"there is no argument {shown} (the arguments are {known})"
        elif argument not in properties:
            problems[argument] = f"the arguments are not valid: {problem['msg']}"
        elif problem["type"] == "missing":
            expected = _expected(properties[argument])
            problems[argument] = f"the argument {shown} is missing: it takes {expected}"
        else:
            expected = _expected(properties[argument])
            value = _shown_value(problem.get("input"))
            problems[argument] = f"the argument {shown} takes {expected}, not {value}"
    return f"{tool}: " + "; ".join(problems.values()) + "."


def _expected(property_schema: dict[str, Any]) -> str:
    """What a property of an input schema takes, in words: "an integer of at least 1"."""
    kinds = []
    for kind in property_schema.get("anyOf", [property_schema]):
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
