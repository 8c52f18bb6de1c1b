"""The store's history read through the CLI, the way a user checks what an engine wrote."""

from __future__ import annotations

import json
import subprocess
import sys


def history(*arguments: str) -> list[dict[str, object]]:
    """The store's history as the CLI sees it."""
    listed = subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", "memory", "history", *arguments, "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return list(json.loads(listed.stdout))
