"""How the SQLite backend's failures read: a row that does not parse, a busy database, a
folder SQLite cannot create its files in."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from lazy_memory.engine.errors import StorageUnavailable


@contextlib.contextmanager
def parsing(path: Path) -> Iterator[None]:
    """Turn a row that does not parse into StorageUnavailable, as _run does its errors."""
    try:
        yield
    except (ValueError, KeyError) as error:
        raise unreadable(path, error) from None


def unreadable(path: Path, error: ValueError | KeyError) -> StorageUnavailable:
    # A time, a type or a provenance that does not parse: the database was changed behind
    # the store's back. Pydantic's messages take several lines; the first says enough.
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return StorageUnavailable(f"the SQLite store at {path} holds a row it cannot read: {reason}")


def busy(error: sqlite3.OperationalError) -> bool:
    """True if the database was locked by another connection: worth another try."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "database is locked" in str(error)
    return bool(code & 0xFF == sqlite3.SQLITE_BUSY)


def why_unwritable(path: Path) -> str:
    """A hint for SQLite's vague "unable to open database file" when the folder is the cause."""
    try:
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return " (its file system is mounted read-only)"
    except OSError:
        return ""
    if not os.access(path.parent, os.W_OK):
        return " (its folder is not writable, and SQLite needs to create files beside it)"
    return ""
