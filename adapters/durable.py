"""Durable file writes and cross-process locks, for the backends that keep plain files."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def stage(target: Path, data: bytes, mode: int) -> Path:
    """A temp file beside target holding data on disk with mode, ready to rename over it."""
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as file:
            # mkstemp's 0600 and the umask are not what the store's files should have.
            os.fchmod(file.fileno(), mode)
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries: a rename is durable only once its directory is."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def append_synced(target: Path, data: bytes, offset: int, mode: int = 0o644) -> None:
    """Write data at offset in target (created if missing) and sync it to disk.

    Whatever followed offset (a line a killed writer left half-written) is cut off first.
    If anything fails, target is cut back to offset: it never keeps part of data.
    """
    flags = os.O_WRONLY | os.O_CLOEXEC
    try:
        descriptor = os.open(target, flags | os.O_CREAT | os.O_EXCL, mode)
        created = True
    except FileExistsError:
        descriptor = os.open(target, flags)
        created = False
    try:
        try:
            if os.fstat(descriptor).st_size != offset:
                os.ftruncate(descriptor, offset)
            view, written = memoryview(data), 0
            while written < len(data):
                written += os.pwrite(descriptor, view[written:], offset + written)
            os.fdatasync(descriptor)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(descriptor, offset)
                os.fdatasync(descriptor)
            raise
    finally:
        os.close(descriptor)
    if created:
        sync_directory(target.parent)


def replace_file(target: Path, data: bytes, mode: int) -> None:
    """Replace target with data atomically: readers see the old file or the new, never part."""
    temp = stage(target, data, mode)
    try:
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    sync_directory(target.parent)


@contextlib.contextmanager
def exclusive_lock(path: Path, mode: int = 0o644) -> Iterator[None]:
    """Hold an exclusive flock on path (created if missing), across processes and threads.

    Each call opens its own descriptor, so two threads of one process exclude each other
    too; the kernel drops the lock when its holder dies, so a killed writer never wedges it.
    """
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, mode)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
