"""Conformance across processes: concurrent writers lose nothing, a killed writer tears nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter

from lazy_memory.engine.records import Operation
from tests.support.documents import REPOSITORY
from tests.support.stores import OpenStorage
from tests.support.writer import WRITER


def start_writer(prefix: str, count: int, shared_names: int) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), prefix, str(count), str(shared_names)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def acknowledgements(output: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


async def test_eight_processes_saving_concurrently_lose_nothing(open_store: OpenStorage) -> None:
    # Open once first so the writers race on writes, not only on creating the store.
    storage = await open_store()
    writers = [start_writer(f"writer{index}", 100, 5) for index in range(8)]
    acknowledged: list[dict[str, object]] = []
    for writer in writers:
        stdout, stderr = writer.communicate(timeout=240)
        assert writer.returncode == 0, stderr
        acknowledged.extend(acknowledgements(stdout))

    history = await storage.history()
    assert len(acknowledged) == 800
    assert len(history) == len(acknowledged)

    saves_per_name = Counter(str(ack["name"]) for ack in acknowledged)
    live = await storage.live_revisions()
    assert live == dict(saves_per_name)
    for name, count in saves_per_name.items():
        revisions = [entry.revision for entry in history if entry.name == name]
        assert revisions == list(range(1, count + 1)), name
    written = {(entry.name, entry.revision, entry.body) for entry in history}
    assert {(ack["name"], ack["revision"], ack["body"]) for ack in acknowledged} == written


async def test_writer_killed_mid_stream_leaves_every_acknowledged_save(
    open_store: OpenStorage,
) -> None:
    await open_store()
    randomness = random.Random(20261130)
    for trial in range(3):
        writer = start_writer(f"trial{trial}", 0, 3)
        assert writer.stdout is not None
        wanted = randomness.randint(5, 80)
        lines = [writer.stdout.readline() for _ in range(wanted)]
        writer.send_signal(signal.SIGKILL)
        remaining, _ = writer.communicate(timeout=60)
        # Lines already in the pipe were acknowledged too, even if we read them late.
        acknowledged = acknowledgements("".join(lines) + remaining)
        assert len(acknowledged) >= wanted

        storage = await open_store()
        history = {(e.name, e.revision, e.body) for e in await storage.history()}
        for ack in acknowledged:
            assert (ack["name"], ack["revision"], ack["body"]) in history
        latest = acknowledged[-1]
        assert (await storage.recall_record(str(latest["name"]))).revision >= int(
            str(latest["revision"])
        )
        assert all(e.operation is Operation.SAVE for e in await storage.history())
        await storage.aclose()
