"""`python -m bench.reproduce`: every figure of bench/README.md, in one command.

Run from the repository root: `python -m bench.reproduce [--only NAME ... | --skip NAME ...]`.
It runs each producer of bench/results/*.json in turn, as a subprocess of this interpreter
(`full`: `python -m bench`, `quick`, `peers`, `launch` and `launch-busy` (`--launch`, alone
and beside two busy loops), `search`, `compaction`, `web`, `container`:
.ci/container.sh, which builds the image and has bench.container write container.json; only
as root, with podman or apt-get to install it; and `first-turn`: `python -m bench
--first-turn`, whose Claude Code rows are `missing` where it is not installed; and
`front-door`: `python -m bench --front-door`), then `tables`:
`python -m bench.tables`, which regenerates every marked table and the plot from those files.

Progress goes to stderr as it runs (each command, its exit status and time); the summary goes
to stdout at the end: each producer, its exit status, its time, and what came of it, with
every MISS in the JSON it wrote, by how much. A producer passed when it wrote its JSON and
the JSON has no MISS; missed when it has one (exit 1 from `python -m bench`, 0 from
bench.web, which never gates): a finding of the run, not a failure of the reproduction;
failed when it exited with anything but 0 or 1, wrote no JSON, or exited 1 without a MISS
in it (a crash). The exit status is 2 if one failed, else 1 if one missed, else 0. A
producer that cannot run here is skipped, with the reason, on stderr and in the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.report import measurement_from_json, misses
from bench.tables import CONTAINER_STEP, REPOSITORY, RESULTS

PASSED, MISSED, FAILED, SKIPPED = "passed", "missed", "failed", "skipped"


def _runs_anywhere() -> str:
    return ""


def _container_unavailable() -> str:
    """Why .ci/container.sh cannot measure here ("" when it can): what it needs to run."""
    if os.geteuid() != 0:
        return "needs root (apt-get, mmdebstrap, rootful podman)"
    if shutil.which("podman") is None and shutil.which("apt-get") is None:
        return "no podman, and no apt-get to install it"
    return ""


@dataclass(frozen=True)
class Producer:
    """One command that writes a results file (or, for `tables`, bench/README.md from them)."""

    name: str
    command: tuple[str, ...]
    writes: str | None
    """The file of bench/results it writes; None for one that writes no results."""
    unavailable: Callable[[], str] = _runs_anywhere
    """Why it cannot run on this machine, or "" when it can."""


@dataclass(frozen=True)
class Outcome:
    """What came of one producer."""

    producer: Producer
    status: str
    returncode: int | None
    seconds: float
    detail: str = ""
    """Why it failed or was skipped."""
    missed: tuple[str, ...] = ()
    """One line per MISS in the JSON it wrote, with by how much."""


def _python(*arguments: str) -> tuple[str, ...]:
    return (sys.executable, "-m", *arguments)


PRODUCERS = (
    Producer("full", _python("bench"), "latest.json"),
    Producer("quick", _python("bench", "--quick"), "quick.json"),
    Producer("peers", _python("bench", "--peers"), "peers.json"),
    Producer("launch", _python("bench", "--launch"), "launch.json"),
    # The same with both cores taken: a session started on a busy machine.
    Producer("launch-busy", _python("bench", "--launch", "--busy", "2"), "launch-busy.json"),
    Producer("search", _python("bench.search"), "search.json"),
    Producer("compaction", _python("bench.compaction"), "compaction.json"),
    # Both embedded backends: bench/README.md quotes `lazy web` on each.
    Producer("web", _python("bench.web", "--backends", "sqlite", "files"), "web.json"),
    Producer("container", ("bash", CONTAINER_STEP), "container.json", _container_unavailable),
    Producer("first-turn", _python("bench", "--first-turn"), "first-turn.json"),
    Producer("front-door", _python("bench", "--front-door"), "front-door.json"),
    Producer("tables", _python("bench.tables"), None),
)
"""Every producer, in the order a reproduction runs them: tables last, from the others' JSON."""


def reproduce(producers: Sequence[Producer], results: Path = RESULTS) -> list[Outcome]:
    """Run every producer in turn, each to its end, and say what came of each."""
    return [_run(producer, results) for producer in producers]


def exit_status(outcomes: Sequence[Outcome]) -> int:
    """2 if a producer failed, else 1 if a target missed, else 0."""
    statuses = {outcome.status for outcome in outcomes}
    return 2 if FAILED in statuses else 1 if MISSED in statuses else 0


def summary(outcomes: Sequence[Outcome]) -> str:
    """A line per producer (exit status, time, what came of it), then every MISS."""
    rows = [("producer", "exit", "seconds", "outcome")]
    for outcome in outcomes:
        said = outcome.status
        if outcome.missed:
            said += f": {len(outcome.missed)} target{'s' * (len(outcome.missed) > 1)}"
        if outcome.detail:
            said += f": {outcome.detail}"
        exited = "-" if outcome.returncode is None else str(outcome.returncode)
        rows.append((outcome.producer.name, exited, f"{outcome.seconds:.0f}", said))
    wide = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [
        "  ".join((row[0].ljust(wide[0]), row[1].rjust(wide[1]), row[2].rjust(wide[2]), row[3]))
        for row in rows
    ]
    total = sum(outcome.seconds for outcome in outcomes)
    count = f"{len(outcomes)} producer{'s' * (len(outcomes) != 1)}"
    lines.insert(0, f"bench.reproduce: {count} in {total:.0f} s")
    for outcome in outcomes:
        lines += [f"{outcome.producer.name}: {line}" for line in outcome.missed]
    return "\n".join(lines)


def main(
    argv: Sequence[str] | None = None,
    producers: Sequence[Producer] = PRODUCERS,
    results: Path = RESULTS,
) -> None:
    """Run the chosen producers, print the summary, exit 0, 1 (a miss) or 2 (a failure)."""
    names = [producer.name for producer in producers]
    parser = argparse.ArgumentParser(prog="python -m bench.reproduce", description=__doc__)
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=", ".join(names))
    choice.add_argument("--skip", nargs="+", choices=names, metavar="NAME", help="as --only")
    arguments = parser.parse_args(argv)
    chosen = [
        producer
        for producer in producers
        if (arguments.only is None or producer.name in arguments.only)
        and producer.name not in (arguments.skip or ())
    ]
    outcomes = reproduce(chosen, results)
    print(summary(outcomes))
    sys.exit(exit_status(outcomes))


def _run(producer: Producer, results: Path) -> Outcome:
    reason = producer.unavailable()
    if reason:
        _progress(f"{producer.name}: skipped: {reason}")
        return Outcome(producer, SKIPPED, None, 0.0, reason)
    written = None if producer.writes is None else results / producer.writes
    before = _stamp(written)
    _progress(f"{producer.name}: {' '.join(producer.command)}")
    started = time.perf_counter()
    returncode = subprocess.run(producer.command, cwd=REPOSITORY, check=False).returncode
    seconds = time.perf_counter() - started
    outcome = _judge(producer, returncode, seconds, written, before)
    detail = f": {outcome.detail}" if outcome.detail else ""
    _progress(f"{producer.name}: exit {returncode} in {seconds:.0f} s, {outcome.status}{detail}")
    return outcome


def _judge(
    producer: Producer, returncode: int, seconds: float, written: Path | None, before: int | None
) -> Outcome:
    """What a producer's exit status and the JSON it wrote (or did not) say about its run."""

    def failed(detail: str) -> Outcome:
        return Outcome(producer, FAILED, returncode, seconds, detail)

    if returncode not in (0, 1) or (written is None and returncode):
        return failed(f"exited {returncode}")
    missed: list[str] = []
    if written is not None:
        if _stamp(written) == before:
            return failed(f"wrote no bench/results/{written.name}")
        try:
            missed = _misses(written)
        except (OSError, ValueError, KeyError, TypeError) as error:
            return failed(f"bench/results/{written.name} unreadable: {error!r}")
    if returncode == 1 and not missed:
        return failed("exited 1 without a MISS in its results")
    status = MISSED if missed else PASSED
    return Outcome(producer, status, returncode, seconds, missed=tuple(missed))


def _misses(path: Path) -> list[str]:
    """Every MISS in a results file, with by how much (none in a file without verdicts)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    judged = [fields for fields in document.get("measurements", []) if "verdict" in fields]
    return misses([measurement_from_json(fields) for fields in judged])


def _stamp(path: Path | None) -> int | None:
    """When path was last written (None if it is not there), to tell a new write from none."""
    if path is None or not path.exists():
        return None
    return path.stat().st_mtime_ns


def _progress(message: str) -> None:
    print(f"reproduce: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
