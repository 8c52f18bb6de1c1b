"""The MCP server `lazy mcp`: it speaks MCP's stdio transport itself, for its start's sake.

Importing this package imports nothing: `initialize` and `tools/list` are answered first."""
