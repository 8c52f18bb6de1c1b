"""Small tmpfs file systems for the disk tests: mounted, filled, made read-only, given back.

Root writes through permission bits and a real disk is too big to fill, so the tests use a
tmpfs of their own: its size makes the disk full, `remount,ro` makes it read-only. Mounting
needs root (CI runs as root); elsewhere the tests that need it are skipped (components.py).
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.components import ROOT, missing, require_root

_CHUNK = 1 << 20


@contextmanager
def small_tmpfs(mount_point: Path, size: str) -> Iterator[Path]:
    """A tmpfs of size (like `4m`) at mount_point, unmounted afterwards; skips unless root."""
    require_root("mounting a tmpfs")
    mount_point.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        missing(ROOT, f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, check=False)


def remount(mount_point: Path, options: str) -> None:
    """Change a mounted tmpfs's options: `ro`, `rw`, `size=16m`."""
    subprocess.run(
        ["mount", "-o", f"remount,{options}", str(mount_point)], capture_output=True, check=True
    )


def free_bytes(path: Path) -> int:
    """The bytes still free on path's file system."""
    status = os.statvfs(path)
    return status.f_bavail * status.f_frsize


def fill(filler: Path, leave: int) -> int:
    """Grow filler until only about leave bytes stay free (or the disk is full); its size."""
    wanted = max(free_bytes(filler.parent) - leave, 0)
    written = 0
    with filler.open("ab", buffering=0) as file:
        while written < wanted:
            try:
                written += file.write(b"\0" * min(_CHUNK, wanted - written))
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
    return filler.stat().st_size
