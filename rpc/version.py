"""The package's version, written once: pyproject.toml reads it from here when it builds.

A constant, not a look-up of the installed package's metadata (about 15 ms): `lazy mcp`
reports it in the `serverInfo` of its first answer, which must come within tens of
milliseconds of its start.
"""

from __future__ import annotations

VERSION = "0.1.0"
