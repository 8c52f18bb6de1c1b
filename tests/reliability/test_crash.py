"""Crash safety: a writer killed with SIGKILL at a random moment loses no acknowledged save.

Every backend (sqlite, files, postgres, and remote: a daemon's SQLite store) takes a series
of trials on one store, 5 on the fast run and 50 on the full one. A trial starts the
conformance suite's writer process (tests/support/writer.py), which prints a line for a
save only once the save call has returned; the test waits for the first line, lets the
stream run for a random while and kills the writer with SIGKILL. Bodies are small in some
trials and up to 256 KiB in others (all but remote), so some kills land in the middle of a
large write. Only the lines that reached the pipe whole count as acknowledged. The store
must then open cleanly, hold every acknowledged save byte for byte, agree with itself, and
hold at most one save of the writer's more: the one in flight when it died, committed but
never acknowledged, which must be the writer's next save, whole.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import ActorKind, HistoryEntry, Operation
from tests.reliability.figures import Figures, Scale
from tests.reliability.store_checks import Acknowledged, inconsistencies, lost, sqlite_integrity
from tests.support.documents import REPOSITORY
from tests.support.writer import WRITER, body_for

SHARED_NAMES = 3
"""Names every trial's writer also saves, so revisions must stay whole across the crashes."""
BODY_BYTES = (0, 0, 16 * 1024, 256 * 1024)
"""A trial's body size is one of these (0: the writer's own short bodies)."""
REMOTE_BODY_BYTES = (0,)
"""Over `remote` the kill lands in the client, not in a write; and a store over 8 MiB cannot
be read back through it yet (test_load's big-store test), which the full run would reach."""
LONGEST_RUN_SECONDS = 0.25
"""The kill lands uniformly within this long after the first acknowledged save."""
HEADING = "crash safety: writer killed with SIGKILL at a random moment"


@dataclass
class Tally:
    """What one backend's trials saw."""

    trials: int = 0
    clean_opens: int = 0
    acknowledged: int = 0
    lost: int = 0
    committed_unacknowledged: int = 0
    writes: int = 0
    """Saves in the store so far: the acknowledged ones and those committed in flight."""


@dataclass(frozen=True)
class Trial:
    """One killed writer: its prefix, body size, and the saves it acknowledged."""

    prefix: str
    body_bytes: int
    acknowledged: list[Acknowledged]


async def test_a_writer_killed_mid_stream_loses_no_acknowledged_save(
    backend: str,
    settings: Settings,
    scale: Scale,
    figures: Figures,
) -> None:
    randomness = random.Random(f"crash-{backend}")
    tally = Tally()
    problems: list[str] = []
    for number in range(scale.pick(5, 50)):
        trial = await asyncio.to_thread(
            killed_writer,
            f"trial{number}",
            randomness.choice(REMOTE_BODY_BYTES if backend == "remote" else BODY_BYTES),
            randomness.uniform(0, LONGEST_RUN_SECONDS),
        )
        tally.trials += 1
        tally.acknowledged += len(trial.acknowledged)
        try:
            storage = await open_storage(settings)
        except Exception as error:
            problems.append(f"{trial.prefix}: the store did not open: {error!r}")
            break
        tally.clean_opens += 1
        try:
            problems += await check_trial(storage, trial, tally)
        except Exception as error:
            problems.append(f"{trial.prefix}: the store could not be read: {error!r}")
            break
        finally:
            await storage.aclose()
        if backend == "sqlite":
            verdict = sqlite_integrity(settings.data_dir / "memory.db")
            if verdict != "ok":
                problems.append(f"{trial.prefix}: integrity_check says {verdict}")

    figures.add(
        HEADING,
        f"{backend}: {tally.clean_opens}/{tally.trials} trials opened cleanly, "
        f"{tally.acknowledged} acknowledged saves, {tally.lost} lost; in "
        f"{tally.committed_unacknowledged} trials the save in flight had committed unacknowledged",
    )
    assert problems == []
    assert tally.lost == 0
    assert tally.clean_opens == tally.trials


async def check_trial(storage: Storage, trial: Trial, tally: Tally) -> list[str]:
    """What is wrong with the store after this trial's kill; the tally brought up to date."""
    history = await storage.history()
    missing = lost(trial.acknowledged, history)
    tally.lost += len(missing)
    problems = [f"{trial.prefix}: lost {save.name} revision {save.revision}" for save in missing]
    extra = unacknowledged(trial, history)
    if extra is None:
        problems.append(f"{trial.prefix}: its history is not its acknowledged saves")
    tally.committed_unacknowledged += 1 if extra else 0
    tally.writes += len(trial.acknowledged) + (1 if extra else 0)
    if len(history) != tally.writes:
        problems.append(f"{trial.prefix}: {len(history)} history entries, not {tally.writes}")
    problems += [f"{trial.prefix}: {p}" for p in await inconsistencies(storage, history)]
    return problems


def killed_writer(prefix: str, body_bytes: int, run_for: float) -> Trial:
    """Start a writer, let it save for run_for seconds after its first save, then SIGKILL it."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), prefix, "0", str(SHARED_NAMES), str(body_bytes)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
    )
    assert writer.stdout is not None
    assert writer.stderr is not None
    output = PipeDrain(writer.stdout.fileno())
    if not output.first_line.wait(60):
        writer.kill()
        raise AssertionError(f"the writer saved nothing: {writer.communicate()[1]!r}")
    time.sleep(run_for)
    writer.send_signal(signal.SIGKILL)
    status = writer.wait(timeout=60)
    output.join(timeout=60)
    stderr = writer.stderr.read().decode(errors="replace")
    writer.stdout.close()
    writer.stderr.close()
    assert status == -signal.SIGKILL, f"the writer ended by itself ({status}): {stderr}"
    return Trial(prefix, body_bytes, acknowledgements(prefix, bytes(output.received)))


class PipeDrain(threading.Thread):
    """Reads a pipe to its end as fast as it fills, so a writer never waits on its output.

    Reading the descriptor itself, never through a buffered file object, counts every byte
    that reached the pipe exactly once.
    """

    def __init__(self, descriptor: int) -> None:
        super().__init__(daemon=True)
        self.descriptor = descriptor
        self.received = bytearray()
        self.first_line = threading.Event()
        self.start()

    def run(self) -> None:
        while chunk := os.read(self.descriptor, 1 << 20):
            self.received += chunk
            if b"\n" in chunk:
                self.first_line.set()
        self.first_line.set()


def acknowledgements(prefix: str, output: bytes) -> list[Acknowledged]:
    """The saves whose line reached the pipe whole: a line cut short acknowledges nothing."""
    saves = []
    for line in output.splitlines(keepends=True):
        if line.endswith(b"\n"):
            printed = json.loads(line)
            name, revision, body = printed["name"], printed["revision"], printed["body"]
            saves.append(Acknowledged(name, revision, body, prefix))
    return saves


def unacknowledged(trial: Trial, history: list[HistoryEntry]) -> bool | None:
    """Whether the writer's history holds one whole save more than it acknowledged.

    False: exactly the acknowledged saves. True: those and the save that was in flight, as
    the writer would have made it (its next step's body, a builder save). None: anything
    else, which a crash must never leave.
    """
    written = [entry for entry in history if entry.actor.detail == trial.prefix]
    steps = len(trial.acknowledged)
    if len(written) == steps:
        return False
    if len(written) != steps + 1:
        return None
    extra = written[-1]
    whole = (
        extra.body == body_for(trial.prefix, steps, trial.body_bytes)
        and extra.operation is Operation.SAVE
        and extra.actor.kind is ActorKind.BUILDER
        and extra.description == f"written by {trial.prefix}"
    )
    return True if whole else None
