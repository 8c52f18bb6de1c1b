"""The SQLite backend's connections, and the one lock it takes on a database file itself.

SQLite locks its files with POSIX record locks, which belong to the process and the file:
closing any descriptor of a file drops every such lock the process holds on it, those of its
other connections included (SQLite's "how to corrupt" page, 2.2). So the one descriptor this
backend opens on a database file itself, to take the read lock a snapshot needs, is closed
only once no connection opened here is open on that file; until then it is set aside. Every
connection of the backend is opened and closed through connect() and close() for that count.

The read lock is the one SQLite's own readers take (os_unix.c: a read lock on the 510
"shared" bytes after PENDING_BYTE), as an open file description lock, which no other
descriptor's close can drop. While it is held, no connection can take the exclusive lock a
WAL database's last connection needs to checkpoint and delete the -wal file as it closes.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import struct
import threading
from pathlib import Path
from urllib.parse import quote

_SHARED_FIRST = 0x40000000 + 2
_SHARED_SIZE = 510
_HEADER = b"SQLite format 3\x00"
# Only Linux has open file description locks; elsewhere snapshots are not taken at all.
_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None)
_BUSY = (errno.EAGAIN, errno.EACCES)

FileId = tuple[int, int]
_guard = threading.Lock()
_live: dict[FileId, int] = {}
_aside: dict[FileId, list[int]] = {}
_file_of: dict[sqlite3.Connection, FileId] = {}


def connect(path: Path, parameters: str | None = None) -> sqlite3.Connection:
    """A connection to the database at path, with URI parameters (`mode=ro`) if given.

    isolation_level=None: transactions are begun explicitly. A store's event loop and its
    connection thread take turns with it, never both at once, hence check_same_thread=False.
    timeout=0: the store retries a busy database itself, in shorter steps than SQLite.
    """
    target: str | Path = path
    if parameters is not None:
        target = f"file:{quote(os.fsencode(path))}?{parameters}"
    connection = sqlite3.connect(
        target,
        uri=parameters is not None,
        isolation_level=None,
        timeout=0,
        check_same_thread=False,
    )
    # Counted before its first statement, so before it holds any lock.
    try:
        status = os.stat(path)
    except OSError:
        connection.close()
        raise
    file = (status.st_dev, status.st_ino)
    with _guard:
        _live[file] = _live.get(file, 0) + 1
        _file_of[connection] = file
    return connection


def close(connection: sqlite3.Connection) -> None:
    """Close a connection from connect(), then any descriptor set aside for its file."""
    try:
        connection.close()
    finally:
        with _guard:
            file = _file_of.pop(connection, None)
            if file is not None:
                _live[file] -= 1
                if not _live[file]:
                    del _live[file]
                    for descriptor in _aside.pop(file, []):
                        os.close(descriptor)


def take_read_lock(path: Path) -> int | None:
    """A descriptor of the WAL database at path holding a reader's shared lock.

    None when a snapshot cannot be guarded this way: no such lock on this system, a database
    not in WAL mode (or not a database: SQLite itself then says what it is), or a file
    system that refuses the lock. Raises "database is locked" while a closing connection
    holds the exclusive lock (to checkpoint): worth another try.
    """
    if _OFD_SETLK is None:
        return None
    descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        header = os.pread(descriptor, 20, 0)
        if header[:16] != _HEADER or header[18:20] != b"\x02\x02":
            _close_descriptor(descriptor)
            return None
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0, as OFD locks require).
        request = struct.pack("hhqqi4x", fcntl.F_RDLCK, os.SEEK_SET, _SHARED_FIRST, _SHARED_SIZE, 0)
        fcntl.fcntl(descriptor, _OFD_SETLK, request)
    except OSError as error:
        _close_descriptor(descriptor)
        if error.errno in _BUSY:
            raise sqlite3.OperationalError("database is locked") from None
        if error.errno in (errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP):
            return None
        raise
    return descriptor


def release_read_lock(descriptor: int) -> None:
    """Let go of a lock from take_read_lock, and of its descriptor once that is safe."""
    _close_descriptor(descriptor)


def _close_descriptor(descriptor: int) -> None:
    # The lock goes at once (closed, or unlocked); only the close of a descriptor may wait.
    with _guard:
        status = os.fstat(descriptor)
        file = (status.st_dev, status.st_ino)
        if file in _live:
            if _OFD_SETLK is not None:
                unlock = struct.pack("hhqqi4x", fcntl.F_UNLCK, os.SEEK_SET, 0, 0, 0)
                fcntl.fcntl(descriptor, _OFD_SETLK, unlock)
            _aside.setdefault(file, []).append(descriptor)
        else:
            os.close(descriptor)
