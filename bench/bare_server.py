"""The floor of the engine's cold start: a pygls server over stdio with no lazy-memory code.

It answers `initialize` (pygls's own handler) and nothing else, so spawning it and
initializing it costs Python, pygls and a pipe: what any pygls engine must pay before its
first answer. Run it as a script: `python bench/bare_server.py`.
"""

from __future__ import annotations

from pygls.lsp.server import LanguageServer


def main() -> None:
    """Serve one client on stdin/stdout until it exits."""
    LanguageServer("bench-bare-server", "0").start_io()


if __name__ == "__main__":
    main()
