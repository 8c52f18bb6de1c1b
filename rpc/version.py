"""The installed package's version, looked up in one place and only when asked.

Reading package metadata costs about 15 ms, so no start-up path pays it unless it reports the
version (`lazy --version`, the engine's and the MCP server's serverInfo).
"""

from __future__ import annotations


def package_version() -> str:
    """lazy-memory's installed version, or "unknown" when it runs from an uninstalled tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lazy-memory")
    except PackageNotFoundError:
        return "unknown"
