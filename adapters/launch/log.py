"""The launch log: what each launch injected, so doctor can say what the last session saw.

One JSON line per launch in `<data dir>/launches.jsonl`: when, which channel (the hook or
the launcher), the role, the size, how many records were listed of how many, and the newest
record with whether it was listed. Writing it never fails, never slows a launch and never
creates anything: no data directory (a store not made yet), or one that cannot be written
(a read-only store, an agent's read-only mount), and the launch simply goes unlogged. An
agent's own process never logs: agents write nothing.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lazy_memory.adapters.config import is_agent
from lazy_memory.engine.constants import LAUNCH_LOG_FILE

_KEEP_BYTES = 256 * 1024
"""Past this size the log keeps only its newer half: it is a window, not an archive."""


def record_launch(data_dir: Path, channel: str, context: dict[str, Any]) -> None:
    """Append one launch to the log, if the data directory exists and can be written; context
    is its launch context as JSON (LaunchContext.as_json), logged without its text.

    An agent's process writes nothing anywhere, this log included.
    """
    if is_agent(os.environ):
        return
    entry = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "channel": channel,
        **{key: value for key, value in context.items() if key != "text"},
    }
    path = data_dir / LAUNCH_LOG_FILE
    try:
        if not data_dir.is_dir() or not os.access(data_dir, os.W_OK):
            return
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line)
            size = os.fstat(descriptor).st_size
        finally:
            os.close(descriptor)
        if size > _KEEP_BYTES:
            _keep_newer_half(path)
    except OSError as error:
        # Here, not at the top: a launch that is logged (nearly all) need not import logging.
        import logging

        logging.getLogger(__name__).debug("launch not logged in %s: %s", path, error)


def last_launches(data_dir: Path, count: int = 1) -> list[dict[str, Any]]:
    """The newest count launches in the log, newest last; none if there is no log."""
    try:
        lines = (data_dir / LAUNCH_LOG_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    launches = []
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line torn by a crash, or written by hand
        if isinstance(entry, dict):
            launches.append(entry)
        if len(launches) == count:
            break
    return launches[::-1]


def _keep_newer_half(path: Path) -> None:
    data = path.read_bytes()
    newer = data[len(data) // 2 :]
    newer = newer[newer.find(b"\n") + 1 :]
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(newer)
    os.replace(temporary, path)
