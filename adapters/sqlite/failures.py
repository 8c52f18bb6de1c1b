"""How the SQLite backend's failures read: text that is not UTF-8, a value that does not
parse, a busy database, a folder SQLite cannot create its files in."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from lazy_memory.adapters.row_checks import lenient_text
from lazy_memory.engine.errors import StorageUnavailable

_T = TypeVar("_T")
_UNDECODABLE = "Could not decode to UTF-8"
"""How sqlite3 fails a whole read when one value it reads is text that is not UTF-8."""


def leniently(work: Callable[[sqlite3.Connection], _T]) -> Callable[[sqlite3.Connection], _T]:
    """work, made again with lenient_text as the connection's decoder if sqlite3 fails it on
    text that is not valid UTF-8: the rows that hold some then read as NotText, which the
    row checks name (row_checks.py), and the others as ever."""

    def run(connection: sqlite3.Connection) -> _T:
        try:
            return work(connection)
        except sqlite3.OperationalError as error:
            if _UNDECODABLE not in str(error):
                raise
        connection.text_factory = lenient_text
        try:
            return work(connection)
        finally:
            connection.text_factory = str

    return run


def unparsed(path: Path, error: ValueError | KeyError) -> StorageUnavailable:
    """The error of a value that does not parse where no row is being read (the rows are
    checked and named as they are read: sql_rows.py)."""
    # Pydantic's messages take several lines; the first says enough.
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return StorageUnavailable(f"the SQLite store at {path} holds a value it cannot read: {reason}")


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
