"""The benchmark suite runs end to end at a tiny size: every group, both embedded backends.

It proves `python -m bench` works, that concurrent saves lose nothing and write nothing
unacknowledged, that `python -m bench --peers` drives the MCP reference memory server (npm,
so that test is marked `node`), that `python -m bench --first-turn` counts the real
Claude Code's sessions (or says it is missing), and that `python -m bench --front-door`
serves its token holders through a crowd; it never asserts on a timing (speed is the
suite's report, not a test's verdict).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import first_request
from bench.peers import REFERENCE_PACKAGE
from bench.report import Measurement, Target, misses
from tests.e2e.claude_code.first_request import AUTO_MEMORY, DEFERRED, LAZY_SECTION, OFFERED
from tests.support.components import NODE, missing

REPOSITORY = Path(__file__).resolve().parents[2]
TINY = ("--sizes", "20", "40", "--repeat", "2", "--requests", "3", "--saves", "3")

GROUPS = (
    "cold: spawn engine, initialize, context",
    "lazy memory list, whole process, median",
    "lazy memory show, whole process, median",
    "warm lazy/memory/context, cached hit, p50",
    "lazy/search, p50",
    "mechanical compaction, median",
    "peak RSS of the warm engine, compaction included (VmHWM)",
    "lazy memory context --hook, builder, warm, whole process, median",
    "lazy memory context --hook, agent, warm, whole process, median",
    "lazy memory context --hook, builder, after a write, whole process, median",
    "lazy memory context --hook, agent, after a write, whole process, median",
    "lazy launch claude --print-command, whole process, median",
    "lazy/memory/context after a write, p50",
    "context after a write: cost growth / records growth from 20",
    "save, 1 client sequential, rate",
    "save, 4 stdio engines, total",
    "save, 4 daemon connections, total",
    "MCP lazy_memory_save, p50",
    "MCP lazy_memory_recall(name), p50",
    "lazy/memory/recall(name), p50",
    "peak RSS, list (lazy/memory/recall, the whole index)",
    "peak RSS, context (lazy/memory/context, builder)",
    "peak RSS, recall (lazy/memory/recall, every index page)",
    "save, mean cost / at 20",
    "lazy/search, p50 / at 20",
    "lazy/memory/recall(name), p50 / at 20",
    "import time of `lazy memory list`: total",
    "import time of `lazy memory context --hook` after a write: total",
    "import time of `lazy engine` to initialize: total",
)


def test_the_smallest_run_measures_every_group_and_loses_no_save(tmp_path: Path) -> None:
    report = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", *TINY, "--json", str(report)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )
    document = json.loads(report.read_text(encoding="utf-8"))
    # The referee: exit 1 exactly when a target missed, each miss named on stderr.
    missed = [m for m in document["measurements"] if m["verdict"] == "MISS"]
    assert done.returncode == (1 if missed else 0), done.stderr
    named = [line for line in done.stderr.splitlines() if line.startswith("MISS ")]
    assert len(named) == len(missed), done.stderr
    assert all(" x over the target" in line or " x under the target" in line for line in named)

    assert {"cpu", "cores", "python", "date"} <= set(document["machine"])
    measurements = document["measurements"]
    for group in GROUPS:
        assert any(m["what"] == group for m in measurements), group
    # PostgreSQL joins on a scratch server wherever its binaries are; else it is named missing.
    backends = {m["backend"] for m in measurements}
    assert {"sqlite", "files"} <= backends <= {"sqlite", "files", "postgres"}
    postgres_missing = [m for m in measurements if m["verdict"] == "missing"]
    assert [m["backend"] for m in postgres_missing] in ([], ["postgres"])
    assert bool(postgres_missing) != any(
        m["backend"] == "postgres" and m["verdict"] != "missing" for m in measurements
    )
    for m in measurements:
        assert m["verdict"] in ("PASS", "MISS", "info", "missing")
        assert m["unit"] or m["verdict"] == "missing"
    # The lost-saves check compares sets of (name, revision) both ways.
    lost = [m for m in measurements if m["what"].startswith("lost saves")]
    unacknowledged = [m for m in measurements if m["what"].startswith("unacknowledged writes")]
    assert len(lost) == len(unacknowledged) == (3 if postgres_missing else 4)
    assert all(m["value"] == 0 for m in lost + unacknowledged)
    assert "verdict" in done.stdout.splitlines()[0]


def test_the_launch_run_times_each_role_s_hook_beside_its_floor_with_busy_loops(
    tmp_path: Path,
) -> None:
    report = tmp_path / "launch.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--launch", *TINY, "--busy", "1", "--json", str(report)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )
    document = json.loads(report.read_text(encoding="utf-8"))

    assert done.returncode in (0, 1), done.stderr
    assert (document["run"]["launch"], document["run"]["busy_loops"]) == (True, 1)
    hooks = [m for m in document["measurements"] if m["what"].startswith("lazy memory context")]
    assert {m["what"] for m in hooks} == {g for g in GROUPS if g.startswith("lazy memory context")}
    assert {m["backend"] for m in hooks} == {"sqlite", "files"}
    for hook in hooks:
        # Each beside the floor runs paired with it; no target at these sizes.
        assert hook["floor_what"].startswith('python -c "import sqlite3", median of the runs')
        assert hook["floor"] > 0
        assert hook["verdict"] == "info"


def test_a_miss_says_by_how_much_and_a_pass_says_nothing() -> None:
    slow = Measurement("save, p50", "sqlite", 1_000, 4.5, "ms", target=Target(3))
    few = Measurement("saves/s", "sqlite", 1_000, 1_500, "saves/s", target=Target(2_000, True))
    fine = Measurement("search, p50", "sqlite", 1_000, 1.0, "ms", target=Target(3))

    assert [slow.shortfall, few.shortfall, fine.shortfall] == [
        "1.50 x over the target",
        "1.33 x under the target",
        "",
    ]
    assert misses([slow, fine]) == [
        "MISS save, p50 (sqlite, 1,000 records): 4.50 ms, target <= 3 ms: 1.50 x over the target"
    ]


@pytest.mark.node
def test_the_peers_run_drives_the_reference_server_through_the_same_workload(
    tmp_path: Path,
) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        missing(NODE, f"`python -m bench --peers` installs {REFERENCE_PACKAGE} with npm")
    report = tmp_path / "peers.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--peers",
            "reference",
            "--sizes",
            "20",
            "--requests",
            "3",
            "--no-gate",
            "--json",
            str(report),
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    measurements = json.loads(report.read_text(encoding="utf-8"))["measurements"]
    reference = [m for m in measurements if m["backend"] == "reference"]
    not_measured = [m["missing_reason"] for m in reference if m["verdict"] == "missing"]
    if not_measured:
        missing(NODE, f"the reference server would not install or run: {not_measured[0]}")
    assert {m["what"].split(": ")[1].split(" ")[0] for m in reference} == {
        "fill",
        "create",
        "search",
        "read",
    }
    ratios = [m for m in measurements if "p50 / lazy mcp p50" in m["what"]]
    assert len(ratios) == 3
    assert all(m["value"] > 0 and m["unit"] == "x" for m in ratios)
    assert {m["backend"] for m in measurements} == {"sqlite", "reference"}


def _first_turn_run(tmp_path: Path, **environment: str) -> list[dict[str, Any]]:
    """`python -m bench --first-turn 1` on a small store: its rows, once it exited 0."""
    report = tmp_path / "first-turn.json"
    small = ("--sizes", "100", "--repeat", "1", "--no-gate", "--json", str(report))
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--first-turn", "1", *small],
        cwd=REPOSITORY,
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(report.read_text(encoding="utf-8"))["measurements"]
    return rows


def test_the_first_turn_group_times_lazy_mcp_and_says_when_claude_code_is_missing(
    tmp_path: Path,
) -> None:
    rows = _first_turn_run(tmp_path, LAZY_CLAUDE=str(tmp_path / "no-claude-here"))

    started = [row for row in rows if row["what"].startswith("`lazy mcp` from spawn")]
    assert [(row["records"], "busy" in row["what"]) for row in started] == [
        (0, False),
        (100, False),
        (100, True),
    ]
    assert all(row["floor"] > 0 and row["target"] == "<= 3 x floor" for row in started)
    sessions = rows[len(started) :]
    assert len(sessions) == len(first_request.WAYS) * len(first_request.LOADS)
    assert {row["verdict"] for row in sessions} == {"missing"}
    assert all("Claude Code is not installed" in row["missing_reason"] for row in sessions)


@pytest.mark.claude_code
@pytest.mark.node
def test_the_first_turn_group_counts_each_way_and_load_with_the_real_claude_code(
    tmp_path: Path,
) -> None:
    if first_request.unavailable():
        missing("Claude Code", first_request.unavailable())

    rows = _first_turn_run(tmp_path)

    counts = [row for row in rows if row["unit"] == "sessions"]
    assert len(counts) == 2 * len(first_request.WAYS) * len(first_request.LOADS)
    assert all(row["value"] in (0, 1) and row["target"] == ">= 1 sessions" for row in counts)
    assert all(row["verdict"] == ("PASS" if row["value"] else "MISS") for row in counts)
    offered = [row["what"] for row in counts if first_request.OFFERED_WHAT in row["what"]]
    assert offered == [
        f"{way}, {load}: {first_request.OFFERED_WHAT}"
        for load in first_request.LOADS
        for way in first_request.WAYS
    ]
    times = [row for row in rows if row["unit"] == "s"]
    assert all(0 < row["value"] < 120 for row in times)


def test_the_front_door_group_serves_token_holders_through_a_small_crowd(tmp_path: Path) -> None:
    report = tmp_path / "front-door.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--front-door", "30", "--quick", "--json", str(report)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )

    rows = json.loads(report.read_text(encoding="utf-8"))["measurements"]
    missed = [row for row in rows if row["verdict"] == "MISS"]
    assert done.returncode == (1 if missed else 0), done.stderr
    served, p99, p50, peak, after, again, crowded, crowded_p99 = rows
    # Every session of every holder was served, though a crowd was connected throughout.
    assert served["value"] == served["target_limit"] > 0
    assert served["verdict"] == "PASS"
    assert "30 hostile sockets, 2 times: 8 holders tried" in served["note"]
    assert p99["target"] == "<= 10 x floor"
    assert p99["floor"] > 0
    assert p50["floor"] > 0
    assert [row["unit"] for row in (peak, after, again)] == ["MiB"] * 3
    assert 0 < peak["floor"] <= peak["value"]
    # With a quarter as many places to wait as the crowd has sockets, every one served too.
    assert crowded["what"].endswith("30 hostile sockets, 7 places to wait")
    assert crowded["value"] == crowded["target_limit"] > 0
    assert crowded_p99["target"] is None


def test_the_first_request_rows_count_every_session_and_say_what_the_others_got() -> None:
    sessions = [
        first_request.Session(OFFERED, True, 2.0, (LAZY_SECTION,)),
        first_request.Session(DEFERRED, False, 3.0, (LAZY_SECTION, AUTO_MEMORY)),
        first_request.Session(DEFERRED, True, 4.0, (LAZY_SECTION,)),
    ]

    rows = first_request.series_rows("claude -p, busy", "Claude Code 9", sessions, 1.5)

    offered, single, p50, slowest = rows
    assert (offered.value, single.value, p50.value, slowest.value) == (1, 2, 3.0, 4.0)
    assert offered.verdict == single.verdict == "MISS"
    assert offered.target == single.target == Target(3, at_least=True)
    assert offered.note.endswith("load average 1.50 at the start; the others: " + f"{DEFERRED} (2)")
    assert single.note.endswith(f"the others held: {LAZY_SECTION} + {AUTO_MEMORY} (1)")
    assert p50.note.endswith("every session in order (s): 2.0 3.0 4.0")
