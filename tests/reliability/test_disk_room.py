"""After a full disk, a SQLite save succeeds as soon as the room its refusal names is free.

A save used to need about half a megabyte after the disk filled, whatever its own size: the
search index's automatic merging rewrote its segments inside the save's transaction
(adapters/sqlite/space.py). Here a running engine fills a small tmpfs with ever smaller
saves, round after round; each time a small save is refused, its error must say how much
room it needs (a little, not the merge's half megabyte), and once exactly that much is free
the same save must be acknowledged, by the engine and by the CLI alike.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

from tests.reliability.engines import SpawnEngine
from tests.reliability.figures import Figures
from tests.reliability.full_disk import (
    DISK_SIZE,
    HEADROOM,
    NAMES,
    SMALLEST_BODY,
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
from tests.support.mounts import fill, free_bytes, small_tmpfs

ROUNDS = 4
CLI_BODY = 32 * 1024
"""Bigger than what the engine's refused saves left spare in the WAL file."""
NEEDS = re.compile(r"this save needs about ([0-9.]+) (KB|MB) free")
A_SMALL_SAVE_NEEDS_AT_MOST = 256 * 1024
"""What a refused save of SMALLEST_BODY bytes may ask for: its own pages and those of the
record it replaces (up to LARGEST_BODY), with a quarter to spare; an index merge alone used
to need 450 KB to 950 KB."""


async def test_a_refused_save_says_the_room_it_needs_and_succeeds_once_that_is_free(
    tmp_path: Path, spawn_engine: SpawnEngine, figures: Figures
) -> None:
    randomness = random.Random("room")
    with small_tmpfs(tmp_path / "disk", DISK_SIZE) as disk:
        data = disk / "data"
        environment = store_environment("sqlite", data)
        engine = await spawn_engine(environment, tmp_path / "engine.log")
        assert "result" in await engine.initialize()
        filler = disk / "filler"
        acknowledged: list[Acknowledged] = []
        asked: list[int] = []
        for _ in range(ROUNDS):
            fill(filler, leave=HEADROOM)
            saved, _refused = await save_until_full(engine, randomness)
            acknowledged += saved

            name = f"record-{randomness.randrange(NAMES)}"
            params = save_params(name, random_body(randomness, SMALLEST_BODY))
            refused = await engine.request("lazy/memory/save", params)
            assert "error" in refused, "the disk was not full"
            needs = room(refused["error"]["message"])
            assert needs <= A_SMALL_SAVE_NEEDS_AT_MOST, refused["error"]["message"]
            asked.append(needs)

            make_free(filler, needs)
            again = await engine.request("lazy/memory/save", params)
            assert "result" in again, (needs, free_bytes(disk), again)
            acknowledged.append(acknowledgement(again["result"]))

            fill(filler, leave=0)
            body = tmp_path / "body"
            body.write_text(random_body(randomness, CLI_BODY))
            arguments = ("memory", "save", "cli", "-t", "user", "-d", "d", "--body-file", body)
            from_cli = lazy(environment, *map(str, arguments))
            assert_one_line_error(from_cli, 7, str(data))
            make_free(filler, room(from_cli.stderr))
            saved_by_cli = lazy(environment, *map(str, arguments), "--json")
            assert saved_by_cli.returncode == 0, saved_by_cli.stderr
            acknowledged.append(acknowledgement(json.loads(saved_by_cli.stdout)))
            filler.unlink()
        assert await engine.close() == 0
        await assert_store_holds("sqlite", tmp_path, data, acknowledged)
    figures.add(
        "room after a full disk (SQLite, 8 MB tmpfs, a running engine and the CLI)",
        f"{ROUNDS} rounds: each refused {SMALLEST_BODY}-byte save asked for "
        f"{min(asked) // 1024}-{max(asked) // 1024} KB and was acknowledged once that was free",
    )


def room(message: str) -> int:
    """The bytes a refusal says its save needs."""
    found = NEEDS.search(message)
    assert found is not None, f"the refusal does not say how much room it needs: {message}"
    amount, unit = found.groups()
    return int(float(amount) * (1024 if unit == "KB" else 1024 * 1024))


def make_free(filler: Path, wanted: int) -> None:
    """Shrink filler until wanted bytes are free on its disk (it may free a page more)."""
    short = wanted - free_bytes(filler.parent)
    if short > 0:
        os.truncate(filler, max(filler.stat().st_size - short, 0))
