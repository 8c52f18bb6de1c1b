"""Shared by the tests of reading a store without writing it: stores on disk, the reads of
the Storage port, another process using the store (store_process.py), read-only mounts."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.errors import NotFound, StorageUnavailable
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_parser import parse_query
from tests.support.actors import ALICE
from tests.support.clocks import T0
from tests.support.components import ROOT, missing, require_root
from tests.support.records import compact

STORE_PROCESS = Path(__file__).with_name("store_process.py")
REPOSITORY = Path(__file__).parents[2]


def settings(backend: str, data: Path) -> Settings:
    """The settings of a store of backend in the data directory data."""
    return Settings(root=data.parent, data_dir=data, backend=backend)


def content(name: str) -> RecordContent:
    """A record called name, its body `body NAME`."""
    return RecordContent(
        name=name, type=RecordType.PROJECT, description=f"about {name}", body=f"body {name}"
    )


async def written_store(backend: str, data: Path) -> None:
    """A closed store holding alpha (saved twice), beta (removed), gamma and a compact."""
    storage = await open_storage(settings(backend, data))
    try:
        for number, name in enumerate(("alpha", "beta", "alpha", "gamma")):
            await storage.save_record(content(name), actor=ALICE, at=T0 + timedelta(minutes=number))
        await storage.remove_record("beta", actor=ALICE, at=T0 + timedelta(minutes=9))
        await storage.put_compact(compact())
    finally:
        await storage.aclose()


async def every_read(storage: Storage) -> dict[str, Any]:
    """What each read of the Storage port answers (NotFound as the string "NotFound")."""
    answers: dict[str, Any] = {"marker": await storage.change_marker()}
    answers["records"] = [(r.name, r.revision, r.body) for r in await storage.list_records()]
    answers["index"] = [tuple(entry) for entry in await storage.list_index()]
    try:
        answers["alpha"] = (await storage.recall_record("alpha")).revision
    except NotFound:
        answers["alpha"] = "NotFound"
    answers["history"] = [(e.name, e.revision) for e in await storage.history()]
    answers["history of beta"] = [e.revision for e in await storage.history("beta")]
    answers["live"] = await storage.live_revisions()
    answers["removed"] = await storage.removed_since({"alpha": 1, "beta": 1})
    answers["search"] = [hit.name for hit in await storage.search(parse_query("body"), 10)]
    answers["compact"] = await storage.get_compact()
    assert await storage.change_marker() == answers["marker"], "a read moved the marker"
    return answers


WRITTEN: dict[str, Any] = {
    "records": [("alpha", 2, "body alpha"), ("gamma", 1, "body gamma")],
    "alpha": 2,
    "history": [("alpha", 1), ("beta", 1), ("alpha", 2), ("gamma", 1), ("beta", 2)],
    "history of beta": [1, 2],
    "live": {"alpha": 2, "gamma": 1},
    "removed": ["beta"],
    "search": ["alpha", "gamma"],
    "compact": compact(),
}


EMPTY: dict[str, Any] = {
    "records": [],
    "index": [],
    "alpha": "NotFound",
    "history": [],
    "history of beta": [],
    "live": {},
    "removed": [],
    "search": [],
    "compact": None,
}


def holds(answers: dict[str, Any], expected: dict[str, Any]) -> None:
    """Assert every read named in expected answered as it says."""
    assert {key: answers[key] for key in expected} == expected


def files_on_disk(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under folder with its inode, size and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        status = path.stat()
        found[str(path.relative_to(folder))] = (status.st_ino, status.st_size, status.st_mtime_ns)
    return found


class StoreProcess:
    """store_process.py running on a store: another engine, as far as this one can tell."""

    def __init__(self, backend: str, data: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(STORE_PROCESS), backend, str(data)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPOSITORY,
        )

    def ask(self, command: str) -> str:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        if command == "crash":
            assert self.process.wait(timeout=30) == 0
            return ""
        readable, _, _ = select.select([self.process.stdout], [], [], 30)
        assert readable, f"the store process did not answer {command!r}"
        return self.process.stdout.readline().strip()

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.ask("close") == "closed"
        assert self.process.wait(timeout=30) == 0


@contextmanager
def store_process(backend: str, data: Path) -> Iterator[StoreProcess]:
    other = StoreProcess(backend, data)
    try:
        yield other
    finally:
        if other.process.poll() is None:
            other.process.kill()
            other.process.wait()


@contextmanager
def read_only_view(source: Path, target: Path) -> Iterator[Path]:
    """source as a read-only bind mount at target: others still write it through source."""
    require_root("a bind mount")
    target.mkdir()
    for command in (
        ["mount", "--bind", str(source), str(target)],
        ["mount", "-o", "remount,bind,ro", str(target)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)
            missing(ROOT, f"cannot make a read-only bind mount here: {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


async def failures_reading(store: Settings) -> list[str]:
    """The message of each StorageUnavailable that opening or reading the store raised: any
    other exception fails the test."""
    try:
        storage = await open_storage(store)
    except StorageUnavailable as error:
        return [one_line(error)]
    failures = []
    try:
        for read in (
            storage.change_marker,
            storage.list_records,
            storage.list_index,
            lambda: storage.recall_record("gamma"),
            storage.history,
            storage.live_revisions,
            lambda: storage.removed_since({"beta": 1}),
            lambda: storage.search(parse_query("body"), 5),
            storage.get_compact,
        ):
            try:
                await read()
            except StorageUnavailable as error:
                failures.append(one_line(error))
    finally:
        await storage.aclose()
    return failures


def one_line(error: StorageUnavailable) -> str:
    """The error's message, once it is checked to be one line."""
    assert "\n" not in error.message, error.message
    return error.message
