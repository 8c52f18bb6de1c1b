"""A full disk and a read-only data directory: clear typed errors, nothing lost, then recovery.

The store lives on a small tmpfs of its own (see mounts.py). A full disk: a filler file
leaves about a megabyte, and a running `lazy engine` saves ever smaller bodies until even
small ones are refused, so the refusals land at many points of a write. Every refusal must
be a typed StorageUnavailable error (-32014 over JSON-RPC; exit 7 and one line from the
CLI), every acknowledged save must be kept and no refused one written, the store must keep
opening and reading, and once the filler is gone the same engine must save again. A
read-only directory (`mount -o remount,ro`): writes are refused the same way, reads work or
fail as clearly, and everything works again once it is writable.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.engine.errors import StorageUnavailable
from tests.reliability.engines import SpawnEngine
from tests.reliability.figures import Figures, Scale
from tests.reliability.full_disk import (
    DISK_SIZE,
    HEADROOM,
    LARGEST_BODY,
    acknowledgement,
    assert_one_line_error,
    assert_store_holds,
    lazy,
    random_body,
    save_params,
    save_until_full,
    store_environment,
)
from tests.reliability.store_checks import Acknowledged
from tests.support.jsonrpc import RawClient
from tests.support.mounts import fill, remount, small_tmpfs

BACKENDS = ("sqlite", "files")
DISK_FULL = ("disk is full", "No space left on device")
READ_ONLY = "Read-only file system"
READ_ONLY_REASONS = (READ_ONLY, "mounted read-only", "readonly database")
"""How a refusal can say why: the OS's words, the SQLite backend's hint, or SQLite's own."""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_full_disk_refuses_saves_clearly_loses_nothing_and_recovers(
    backend: str, tmp_path: Path, spawn_engine: SpawnEngine, scale: Scale, figures: Figures
) -> None:
    randomness = random.Random(f"disk-{backend}")
    with small_tmpfs(tmp_path / "disk", DISK_SIZE) as disk:
        data = disk / "data"
        environment = store_environment(backend, data)
        engine = await spawn_engine(environment, tmp_path / "engine.log")
        assert "result" in await engine.initialize()
        acknowledged: list[Acknowledged] = []
        refusals = 0
        rounds = scale.pick(1, 3)
        for _ in range(rounds):
            filler = disk / "filler"
            fill(filler, leave=HEADROOM)
            saved, refused = await save_until_full(engine, randomness)
            acknowledged += saved
            refusals += len(refused)
            assert refused, "the disk never filled up"
            assert_refusals_are_clear(refused, data, DISK_FULL)
            assert list(data.glob(".*.tmp")) == [], "a refused save left a temporary file"
            await assert_reads_work(engine, acknowledged)

            # A process started now opens the full store, reads it, and is refused clearly.
            listed = lazy(environment, "memory", "list", "--json")
            assert listed.returncode == 0, listed.stderr
            assert {record["name"] for record in json.loads(listed.stdout)} == live_names(
                acknowledged
            )
            refused_line = lazy(environment, "memory", "save", "cli", "-t", "user", "-d", "d")
            assert_one_line_error(refused_line, 7, str(data))

            filler.unlink()
            body = random_body(randomness, LARGEST_BODY)
            saved_again = await engine.request("lazy/memory/save", save_params("after-full", body))
            assert "result" in saved_again, saved_again
            acknowledged.append(acknowledgement(saved_again["result"]))
            acknowledged.append(cli_save(environment, "from-cli"))
        assert await engine.close() == 0

        history_size = await assert_store_holds(backend, tmp_path, data, acknowledged)
    figures.add(
        "full disk (8 MB tmpfs, a running engine saving until refused, then space returned)",
        f"{backend}: {rounds} round(s), {len(acknowledged)} acknowledged saves, "
        f"{refusals} refused with StorageUnavailable, 0 lost, "
        f"{history_size} history entries; saves work again once space returns",
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_read_only_data_directory_refuses_writes_clearly_and_recovers(
    backend: str, tmp_path: Path, spawn_engine: SpawnEngine, figures: Figures
) -> None:
    with small_tmpfs(tmp_path / "disk", DISK_SIZE) as disk:
        environment = store_environment(backend, disk)
        seeded = [cli_save(environment, f"seed-{number}") for number in range(3)]
        names = [save.name for save in seeded]
        remount(disk, "ro")
        try:
            reads = {
                "list": lazy(environment, "memory", "list", "--json"),
                "show": lazy(environment, "memory", "show", names[0], "--json"),
                "search": lazy(environment, "search", "seed", "--json"),
                "context": lazy(environment, "memory", "context", "--json"),
            }
            refused = lazy(environment, "memory", "save", "ro", "-t", "user", "-d", "d")
            engine_outcome = await engine_on_a_read_only_store(
                spawn_engine, environment, disk, tmp_path, names
            )
        finally:
            remount(disk, "rw")

        assert_one_line_error(refused, 7, str(disk))
        says_read_only = any(reason in refused.stderr for reason in READ_ONLY_REASONS)
        read_outcomes = []
        for what, result in reads.items():
            if result.returncode == 0:
                read_outcomes.append(f"{what} works")
            else:
                assert_one_line_error(result, 7, str(disk))
                read_outcomes.append(f"{what} fails clearly")
        shown = reads["show"]
        if shown.returncode == 0:
            assert json.loads(shown.stdout)["body"] == seeded[0].body
        listed = reads["list"]
        if listed.returncode == 0:
            assert [record["name"] for record in json.loads(listed.stdout)] == names

        after = [cli_save(environment, "after-read-only")]
        await assert_store_holds(backend, tmp_path, disk, seeded + after)
    figures.add(
        "read-only data directory (tmpfs remounted ro, then rw)",
        f"{backend}: CLI writes refused (exit 7, one line, "
        f"{'saying' if says_read_only else 'not saying'} the file system is "
        f"read-only); CLI reads: {', '.join(read_outcomes)}; a new engine: "
        f"{engine_outcome.replace(str(disk), '<data>')}; nothing lost, writable again after "
        "remount",
    )


async def test_a_running_engine_refuses_writes_while_its_store_is_read_only(
    tmp_path: Path, spawn_engine: SpawnEngine, figures: Figures
) -> None:
    # Only the files backend: a running engine on SQLite holds its database open for
    # writing, and the kernel will not make a file system read-only under an open writer.
    with small_tmpfs(tmp_path / "disk", DISK_SIZE) as disk:
        environment = store_environment("files", disk)
        engine = await spawn_engine(environment, tmp_path / "engine.log")
        assert "result" in await engine.initialize()
        acknowledged = []
        for number in range(3):
            saved = await engine.request("lazy/memory/save", save_params(f"before-{number}", "b"))
            acknowledged.append(acknowledgement(saved["result"]))
        remount(disk, "ro")
        try:
            refused = [
                await engine.request("lazy/memory/save", save_params(f"during-{number}", "b"))
                for number in range(3)
            ]
            await assert_reads_work(engine, acknowledged)
        finally:
            remount(disk, "rw")
        assert_refusals_are_clear(
            [response.get("error") for response in refused], disk, READ_ONLY_REASONS
        )

        saved = await engine.request("lazy/memory/save", save_params("after", "b"))
        assert "result" in saved, saved
        acknowledged.append(acknowledgement(saved["result"]))
        assert await engine.close() == 0
        await assert_store_holds("files", tmp_path, disk, acknowledged)
    figures.add(
        "read-only data directory (tmpfs remounted ro, then rw)",
        "files, under a running engine: 3/3 saves refused with StorageUnavailable (-32014), "
        "recall, search and context still served, saves work again after remount",
    )


def assert_refusals_are_clear(
    errors: Sequence[dict[str, Any] | None], data: Path, reasons: tuple[str, ...]
) -> None:
    """Each refusal is StorageUnavailable, on one line, naming the store and why."""
    for error in errors:
        assert error is not None, "a save was accepted"
        assert error["code"] == StorageUnavailable.code, error
        assert error["data"] == {"type": "StorageUnavailable"}, error
        message = error["message"]
        assert "\n" not in message, message
        assert str(data) in message, message
        assert any(reason in message for reason in reasons), message


async def assert_reads_work(engine: RawClient, acknowledged: list[Acknowledged]) -> None:
    """The running engine still serves the index, a record, a search and the launch context."""
    index = await engine.result("lazy/memory/recall", {})
    assert {record["name"] for record in index["records"]} == live_names(acknowledged)
    latest = acknowledged[-1]
    recalled = await engine.result("lazy/memory/recall", {"name": latest.name})
    assert (recalled["record"]["revision"], recalled["record"]["body"]) == (
        latest.revision,
        latest.body,
    )
    await engine.result("lazy/search", {"query": "about"})
    context = await engine.result("lazy/memory/context", {"role": "builder"})
    assert context["available"], context["text"]


async def engine_on_a_read_only_store(
    spawn_engine: SpawnEngine,
    environment: dict[str, str],
    disk: Path,
    tmp_path: Path,
    names: list[str],
) -> str:
    """Start an engine on the read-only store: it serves reads and refuses writes, or it
    exits at once with one line; which of the two, for the figures."""
    log = tmp_path / "engine-read-only.log"
    engine = await spawn_engine(environment, log)
    try:
        initialized = await engine.initialize()
    except ConnectionError:
        assert engine.process is not None
        status = await engine.process.wait()
        lines = log.read_text().splitlines()
        assert status == 7, lines
        assert len(lines) == 1, lines
        assert lines[0].startswith("lazy: error: "), lines
        assert str(disk) in lines[0], lines
        return f"exits with status 7 and one line ({lines[0].removeprefix('lazy: error: ')})"
    assert "result" in initialized, initialized
    refused = await engine.request("lazy/memory/save", save_params("ro", "b"))
    assert_refusals_are_clear([refused.get("error")], disk, READ_ONLY_REASONS)
    index = await engine.result("lazy/memory/recall", {})
    assert [record["name"] for record in index["records"]] == names
    assert await engine.close() == 0
    return "serves reads and refuses saves with StorageUnavailable"


def cli_save(environment: dict[str, str], name: str) -> Acknowledged:
    """Save with the CLI; what it acknowledged."""
    saved = lazy(
        environment, "memory", "save", name, "-t", "user", "-d", "d", "--body", name, "--json"
    )
    assert saved.returncode == 0, saved.stderr
    return acknowledgement(json.loads(saved.stdout))


def live_names(acknowledged: list[Acknowledged]) -> set[str]:
    """The names these saves left live (nothing here removes a record)."""
    return {save.name for save in acknowledged}
