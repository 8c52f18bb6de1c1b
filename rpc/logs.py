"""Logging for long-running processes: stderr only, and pygls kept quiet."""

from __future__ import annotations

import logging
import sys


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr (stdout is the protocol channel) and silence pygls.

    pygls logs whole message bodies at INFO and request params on failures: record
    contents that do not belong in a log. The engine logs what it needs itself.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("lazy-memory %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("pygls").setLevel(logging.CRITICAL)
