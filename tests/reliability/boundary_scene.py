"""The project every boundary test starts from, and a byte-level fingerprint of a folder.

The fixture `scene` is registered for the whole suite in tests/reliability/conftest.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from lazy_memory.adapters.clock import SystemClock
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind
from lazy_memory.engine.service import MemoryService
from tests.reliability.live_engine import LAZY
from tests.reliability.snapshots import Snapshot, snapshot
from tests.reliability.write_paths import SEED_DESCRIPTION, SEEDED

SEEDER = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="seeder"))
LOGS = "logs"
"""The folder under the scene's root for the tests' own logs, left out of its fingerprint."""

Tree = dict[str, tuple[str, int, str]]
"""Every entry under a folder by relative path: its kind, its mode, and its content's digest
(a link's target; nothing for a folder)."""


@dataclass(frozen=True)
class Scene:
    """A project with a seeded store, a token, a harness memory file and a folder outside.

    Everything a `lazy` process of the test could write is under root: the project, the data
    directory, HOME, the harness's config folder and the outside folder.
    """

    root: Path
    project: Path
    data_dir: Path
    memory: Path
    outside: Path
    token_id: str
    """A builder token's id, for `token revoke` to name."""

    @property
    def logs(self) -> Path:
        """Where the test's own processes log (not part of what they must leave unchanged)."""
        return self.root / LOGS

    def state(self) -> Snapshot:
        """What the store holds now."""
        return asyncio.run(store_state(self.data_dir))

    def files(self) -> Tree:
        """Every file and folder under root, byte for byte, but the test's logs."""
        return fingerprint(self.root, skip={LOGS})


def fingerprint(root: Path, skip: set[str] | None = None) -> Tree:
    """Every entry under root (root itself as "."): kind, mode and the digest of its bytes."""
    tree: Tree = {}
    for directory, folders, files in os.walk(root):
        here = Path(directory)
        relative = here.relative_to(root)
        if relative == Path("."):
            folders[:] = [name for name in folders if name not in (skip or set())]
        tree[str(relative)] = ("folder", stat.S_IMODE(here.lstat().st_mode), "")
        for name in [*files, *(name for name in folders if (here / name).is_symlink())]:
            path = here / name
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                kind, content = "link", os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                kind, content = "file", hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                kind, content = "other", ""
            tree[str(relative / name)] = (kind, stat.S_IMODE(info.st_mode), content)
    return tree


def lazy(*arguments: str, **environment: str) -> subprocess.CompletedProcess[str]:
    """Run `lazy ARGS...` in the current folder with extra environment."""
    return subprocess.run(
        [*LAZY, *arguments],
        env={**os.environ, **environment},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def changes(before: Tree, after: Tree) -> list[str]:
    """What differs between two fingerprints, one entry per path, for an assertion message."""
    return [
        f"{path}: {before.get(path)} -> {after.get(path)}"
        for path in sorted({*before, *after})
        if before.get(path) != after.get(path)
    ]


async def store_state(data_dir: Path) -> Snapshot:
    """What the sqlite store in data_dir holds now, read by a process of its own."""
    storage = await SqliteStorage.open(data_dir / "memory.db")
    try:
        return await snapshot(storage)
    finally:
        await storage.aclose()


async def seed(data_dir: Path) -> None:
    """Twelve records and a compact of them, written by a builder."""
    storage = await SqliteStorage.open(data_dir / "memory.db")
    try:
        service = MemoryService(storage, SEEDER, SystemClock())
        for name in SEEDED:
            await service.save(
                name, type="project", description=SEED_DESCRIPTION + name, body=f"about {name}"
            )
        await service.compact(Mode.MECHANICAL)
    finally:
        await storage.aclose()
