"""What the full-disk tests share: a small disk filled by a running engine, and the checks
that nothing acknowledged was lost.

A store on a small tmpfs (tests/support/mounts.py); a running `lazy engine` saves ever smaller
bodies until even small ones are refused; `lazy` runs on the same store; and, reopened, the
store must hold every acknowledged save and nothing else.
"""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from tests.reliability.store_checks import Acknowledged, inconsistencies, lost, sqlite_integrity
from tests.support.jsonrpc import RawClient

DISK_SIZE = "8m"
HEADROOM = 1 << 20
"""What the filler file leaves free before the saves fill the rest."""
LARGEST_BODY = 64 * 1024
SMALLEST_BODY = 64
NAMES = 24
"""Saves cycle through this many names, so the disk fills with updates as well as creations."""


async def save_until_full(
    engine: RawClient, randomness: random.Random
) -> tuple[list[Acknowledged], list[dict[str, Any]]]:
    """Save ever smaller bodies (halved at each refusal) until even small ones are refused."""
    saved: list[Acknowledged] = []
    refused: list[dict[str, Any]] = []
    size = LARGEST_BODY
    while size >= SMALLEST_BODY:
        name = f"record-{randomness.randrange(NAMES)}"
        response = await engine.request(
            "lazy/memory/save", save_params(name, random_body(randomness, size))
        )
        if "result" in response:
            saved.append(acknowledgement(response["result"]))
        else:
            refused.append(response["error"])
            size //= 2
    return saved, refused


async def assert_store_holds(
    backend: str, tmp_path: Path, data: Path, acknowledged: list[Acknowledged]
) -> int:
    """Reopened, the store holds every acknowledged save and nothing else, and agrees with
    itself; the number of history entries."""
    storage = await open_storage(Settings(root=tmp_path, data_dir=data, backend=backend))
    try:
        history = await storage.history()
        assert lost(acknowledged, history) == []
        assert len(history) == len(acknowledged)
        assert await inconsistencies(storage, history) == []
    finally:
        await storage.aclose()
    if backend == "sqlite":
        assert sqlite_integrity(data / "memory.db") == "ok"
    return len(history)


def store_environment(backend: str, data: Path) -> dict[str, str]:
    """The environment of an engine or a CLI run on this store."""
    return {**os.environ, "LAZY_DATA": str(data), "LAZY_STORAGE": backend, "LAZY_ACTOR": "disk"}


def lazy(environment: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run `lazy ARGS...` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def assert_one_line_error(
    result: subprocess.CompletedProcess[str], status: int, where: str
) -> None:
    """The CLI's way to fail: the status, nothing on stdout, one line naming where."""
    assert result.returncode == status, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("lazy: error: ")
    assert where in result.stderr
    assert "Traceback" not in result.stderr


def save_params(name: str, body: str) -> dict[str, str]:
    """A valid save of name."""
    return {"name": name, "type": "project", "description": f"about {name}", "body": body}


def acknowledgement(record: dict[str, Any]) -> Acknowledged:
    """The acknowledgement a saved record's JSON stands for."""
    return Acknowledged(record["name"], record["revision"], record["body"])


def random_body(randomness: random.Random, size: int) -> str:
    """size characters of random words, which neither compress nor repeat."""
    letters = string.ascii_lowercase + " "
    return "".join(randomness.choices(letters, k=size))
