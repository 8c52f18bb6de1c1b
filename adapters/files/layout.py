"""The files backend's directory: its files' names, what tells their versions apart, and the
error for a corrupt store."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from lazy_memory.engine.constants import CHECKPOINT_FILE, HISTORY_FILE
from lazy_memory.engine.errors import StorageUnavailable

if TYPE_CHECKING:
    from pydantic import ValidationError

LOCK = ".memory.lock"

FileKey = tuple[int, int, int]


def file_key(status: os.stat_result) -> FileKey:
    """What tells one version of a file from another: inode, modification time and size."""
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def key_of(path: Path) -> FileKey | None:
    """The key of the file at path, or None when there is none."""
    try:
        return file_key(path.stat())
    except FileNotFoundError:
        return None


def file_of(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at path, or None when there is none."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return (status.st_dev, status.st_ino)


def mode_of(target: Path) -> int:
    """The permission bits a replacement of target keeps (0o644 for a new file)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o644


def remove_stale_temps(root: Path) -> None:
    """Temporary files of replacements that a killed process left (under the flock)."""
    for name in (CHECKPOINT_FILE, HISTORY_FILE):
        for temp in root.glob(f".{name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()


def corrupt(path: Path, reason: str) -> StorageUnavailable:
    """The error for a store whose file at path cannot be read for reason."""
    return StorageUnavailable(f"the store at {path} is corrupt: {reason}")


def validation_reason(error: ValidationError) -> str:
    """Where a file's content first breaks its model, and how, for corrupt()."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"]) or "top level"
    return f"{location}: {first['msg']}"
