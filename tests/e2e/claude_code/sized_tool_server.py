"""A tiny stdio MCP server whose tools return exactly as many characters as they are asked for.

Run as `python sized_tool_server.py [DECLARED]`; it offers two tools:

- `sized_text(chars, fill="x")`: `sized_text_body(chars, fill)`, as text only (no
  structured content, which Claude Code would hand the model instead), with no `_meta`;
- `sized_text_declared(chars, fill="x")`: the same, but its `tools/list` entry declares
  `"_meta": {"anthropic/maxResultSizeChars": DECLARED}` (DEFAULT_TOOL_RESULT_LIMIT_CHARS
  unless given), which is how an MCP tool raises Claude Code's cap on its result.

With the MCP SDK 2.x the high-level server takes `meta=` in `@server.tool(...)` and sends it
as the tool's `_meta` in `tools/list`; `structured_output=False` keeps the result to text
content.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

from lazy_memory.adapters.config import DEFAULT_TOOL_RESULT_LIMIT_CHARS

SERVER_NAME = "sized"
TOOL = "sized_text"
DECLARED_TOOL = "sized_text_declared"
RESULT_SIZE_META = "anthropic/maxResultSizeChars"
END_MARKER = "END-OF-RESULT"


def sized_text_body(units: int, fill: str = "x", prefix: str = "result line") -> str:
    """Exactly units UTF-16 code units (JavaScript's string length) of numbered lines.

    Each line is prefix and its number, padded with fill (an emoji is 2 units) to 80 units;
    a unit that fill cannot fill whole is a ".". END_MARKER ends the text.
    """
    if units < len(END_MARKER):
        return END_MARKER[:units]
    pieces: list[str] = []
    left = units - len(END_MARKER)
    number = 0
    while left > 0:
        line = _padded(f"{prefix} {number:06d} ", fill, min(left, 80) - 1)
        line += "\n" if _units(line) < left else ""
        pieces.append(line)
        left -= _units(line)
        number += 1
    return "".join(pieces) + END_MARKER


def _padded(start: str, fill: str, units: int) -> str:
    """start cut or padded with fill to exactly units UTF-16 units."""
    text = start[:units]
    while _units(text) + _units(fill) <= units:
        text += fill
    return text + "." * (units - _units(text))


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def build_server(declared: int = DEFAULT_TOOL_RESULT_LIMIT_CHARS) -> MCPServer:
    """The server with its two tools; the second declares a result cap of declared."""
    server = MCPServer(SERVER_NAME, log_level="WARNING")

    @server.tool(name=TOOL, structured_output=False)
    def sized_text(chars: int, fill: str = "x") -> str:
        """Return exactly chars characters (UTF-16 units) of numbered lines padded with fill."""
        return sized_text_body(chars, fill)

    @server.tool(
        name=DECLARED_TOOL,
        structured_output=False,
        meta={RESULT_SIZE_META: declared},
    )
    def sized_text_declared(chars: int, fill: str = "x") -> str:
        """The same as sized_text, from a tool that declares a larger result cap."""
        return sized_text_body(chars, fill)

    return server


if __name__ == "__main__":
    build_server(*(int(argument) for argument in sys.argv[1:2])).run()
