"""The SessionStart hook's last section, kept beside a SQLite or files store to be shown again.

Every session start runs the hook, and most find the store as the last one left it. Rendering
the section needs the engine's models (pydantic) and asyncio, several times the cost of the
process itself; showing it again needs neither. So a builder's hook that rendered a section
keeps it in `<data>/launch-cache.json` under a key of everything it depended on: the role,
the hook's limit and warn_bytes, the store's files as the file system has them, and the
renderer's own modules. For SQLite those files are the database and its WAL, plus the WAL
index's header (SQLite counts every write transaction there, so any commit, a compact's
included, changes the key even within one tick of the file times); for the files backend,
the history (every write appends to it), the checkpoint and the compact (both replaced
whole, so a new inode). The next hook computes the key with a few stat calls and, when it
matches, prints the kept text without importing the engine.

The key is taken before the store is read, so a write that lands while a section is being
rendered leaves a key that no longer matches. Only a section that could be read is kept,
with the warnings its assembly logged (an over-size section, an unreadable compact), which
are said again each time it is shown.
Agents never write it: they write nothing. Any trouble reading or writing the file only
means rendering anew.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from lazy_memory.adapters.config import Settings

CACHE_FILE = "launch-cache.json"
_PACKAGE = Path(__file__).resolve().parent.parent
_RENDERER = (
    "engine/context.py",
    "engine/delivery.py",
    "engine/index.py",
    "engine/visible.py",
    "engine/doctor.py",
    "engine/injected.py",
    "rpc/cli/context.py",
    "adapters/launch_cache.py",
)
"""The modules a hook's section comes out of: a new version of any renders anew."""


_STORE_FILES = {
    "sqlite": ("memory.db", "memory.db-wal"),
    "files": ("memory-history.json", "memories.json", "memory-compact.json"),
}
"""Each backend's files, the first of which exists once the store does. Spelled out rather
than imported from the adapters, which import pydantic: the kept path must not."""


def cache_key(settings: Settings, role: str) -> str | None:
    """The key of the section the hook of role would render now; None if it is not kept
    (a backend with no files here, or no store yet)."""
    names = _STORE_FILES.get(settings.backend)
    if names is None or settings.remote:
        return None
    first, *others = (settings.data_dir / name for name in names)
    parts = [role, str(settings.hook_limit_chars), str(settings.warn_bytes), str(first)]
    for path in (first, *others):
        try:
            status = os.stat(path)
        except FileNotFoundError:
            if path == first:
                return None
            parts.append("-")
            continue
        except OSError:
            return None
        parts.append(f"{status.st_ino}:{status.st_size}:{status.st_mtime_ns}")
    if settings.backend == "sqlite":
        parts.append(_wal_index_header(first.with_name("memory.db-shm")))
    for module in _RENDERER:
        try:
            status = os.stat(_PACKAGE / module)
        except OSError:
            return None
        parts.append(f"{module}:{status.st_size}:{status.st_mtime_ns}")
    return "\n".join(parts)


def _wal_index_header(path: Path) -> str:
    """The WAL index's header (its first 48 bytes: SQLite's count of write transactions, the
    last frame, their checksums), which every commit changes, whatever the file times say."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return "-"
    try:
        return os.read(descriptor, 48).hex()
    except OSError:
        return "-"
    finally:
        os.close(descriptor)


def kept_section(settings: Settings, key: str) -> dict[str, Any] | None:
    """The kept section and its launch-log entry, if it was kept under key."""
    try:
        kept = json.loads((settings.data_dir / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    if not isinstance(kept.get("text"), str) or not isinstance(kept.get("delivery"), dict):
        return None
    warnings = kept.get("warnings")
    if not isinstance(warnings, list) or not all(isinstance(line, str) for line in warnings):
        return None
    return kept


def keep_section(
    settings: Settings, key: str, text: str, delivery: dict[str, Any], warnings: list[str]
) -> None:
    """Keep text, its launch-log entry and the warnings its assembly logged under key,
    replacing what was kept; never fails."""
    if "LAZY_TASK_ID" in os.environ:
        return
    path = settings.data_dir / CACHE_FILE
    temporary = path.with_name(f".{CACHE_FILE}.{os.getpid()}.tmp")
    kept = {"key": key, "text": text, "delivery": delivery, "warnings": warnings}
    content = json.dumps(kept, default=str)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(content.encode("utf-8"))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
