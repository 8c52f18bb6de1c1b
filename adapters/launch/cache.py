"""The SessionStart hook's last section for each role, kept beside a SQLite or files store.

Every session start runs the hook, and most find the store as the last one left it. Even the
light render (adapters/launch/state.py) reads every record; showing the section again reads
one small file. So a hook that rendered a section keeps it, per role, in
`<data>/launch-cache-<role>.json` under a key of everything it depended on: the role, the
hook's limit, the tool result limit (the closing line counts recall's pages at it) and
warn_bytes, the store's files as the file system has them, and the renderer's own modules.
For SQLite those files are the database and its WAL, plus the WAL index's header (SQLite
counts every write transaction there, so any commit, a compact's included, changes the key
even within one tick of the file times); for the files backend, the history (every write
appends to it), the checkpoint and the compact (both replaced whole, so a new inode). The
next hook of the role computes the key with a few stat calls and, when it matches, prints the
kept text without reading the store.

The key is taken before the store is read, so a write that lands while a section is being
rendered leaves a key that no longer matches. Only a section that could be read is kept,
with the warnings its assembly logged (an over-size section), which are said again each time
it is shown, and the digest of the compact it was rendered with, once the compact's model
accepted it: the next render after a write need not ask the model again.

The file is derived data, not a record, so an agent's hook keeps its own as a builder's does
(agents write no record, and no launch log). Any trouble reading or writing it only means
rendering anew; deleting it is always safe.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from lazy_memory.adapters.config import Settings

_PACKAGE = Path(__file__).resolve().parents[2]
"""The lazy_memory package, whose modules the renderer list names."""
_RENDERER = (
    "engine/context.py",
    "engine/delivery.py",
    "engine/index.py",
    "engine/kinds.py",
    "engine/json_time.py",
    "engine/visible.py",
    "engine/doctor.py",
    "engine/injected.py",
    "rpc/cli/context.py",
    "rpc/cli/hook.py",
    "adapters/launch/cache.py",
    "adapters/launch/state.py",
    "adapters/sqlite/index.py",
    "adapters/sqlite/reader.py",
    "adapters/files/journal.py",
    "adapters/files/index.py",
    "adapters/files/entries.py",
    "adapters/files/checkpoint.py",
)
"""The modules a hook's section comes out of: a new version of any renders anew."""


_STORE_FILES = {
    "sqlite": ("memory.db", "memory.db-wal"),
    "files": ("memory-history.json", "memories.json", "memory-compact.json"),
}
"""Each backend's files, the first of which exists once the store does. Spelled out rather
than imported from the adapters, which the kept path need not import."""


class Kept(NamedTuple):
    """A role's kept section: what it was rendered from (its key), and what to say again."""

    key: str
    text: str
    delivery: dict[str, Any]
    """Its launch-log entry."""
    warnings: list[str]
    compact: str | None
    """The digest of the compact it was rendered with, which the compact's model accepted."""


def cache_file(settings: Settings, role: str) -> Path:
    """Where the section of role is kept."""
    return settings.data_dir / f"launch-cache-{role}.json"


def cache_key(settings: Settings, role: str) -> str | None:
    """The key of the section the hook of role would render now; None if it is not kept
    (a backend with no files here, or no store yet)."""
    names = _STORE_FILES.get(settings.backend)
    if names is None or settings.remote:
        return None
    first, *others = (settings.data_dir / name for name in names)
    parts = [
        role,
        str(settings.hook_limit_chars),
        str(settings.tool_result_limit_chars),
        str(settings.warn_bytes),
        str(first),
    ]
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


def kept_section(settings: Settings, role: str) -> Kept | None:
    """What the last hook of role kept, whatever its key; None if nothing usable is kept."""
    try:
        kept = json.loads(cache_file(settings, role).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or not isinstance(kept.get("key"), str):
        return None
    if not isinstance(kept.get("text"), str) or not isinstance(kept.get("delivery"), dict):
        return None
    warnings = kept.get("warnings")
    if not isinstance(warnings, list) or not all(isinstance(line, str) for line in warnings):
        return None
    compact = kept.get("compact")
    if compact is not None and not isinstance(compact, str):
        return None
    return Kept(kept["key"], kept["text"], kept["delivery"], warnings, compact)


def keep_section(settings: Settings, role: str, kept: Kept) -> None:
    """Keep a section of role, replacing what was kept; never fails."""
    path = cache_file(settings, role)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    content = json.dumps(kept._asdict(), default=str)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(content.encode("utf-8"))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
