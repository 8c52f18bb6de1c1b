"""`python -m bench.reproduce`'s plumbing, with cheap producers in place of the benchmarks.

Each fake producer is a Python one-liner that writes (or does not write) a results file in a
temporary folder and exits as a benchmark would; what is checked is what the reproduction
makes of that: the summary, and its exit status (1 for a miss, 2 for a failure). No timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench import reproduce
from bench.reproduce import Producer

_WRITE = (
    "import sys; from pathlib import Path; "
    "from bench.report import Measurement, Target, write_json; "
    "write_json(Path(sys.argv[1]), "
    "[Measurement('search, p50', 'sqlite', 1000, {value}, 'ms', target=Target(3))], "
    "{{'command': 'fake'}}, 1.0); sys.exit({code})"
)


def _producer(name: str, results: Path, script: str, writes: str | None = None) -> Producer:
    written = str(results / (writes or f"{name}.json"))
    return Producer(name, (sys.executable, "-c", script, written), writes or f"{name}.json")


def _writes(name: str, results: Path, value: float, code: int) -> Producer:
    return _producer(name, results, _WRITE.format(value=value, code=code))


def _run(
    argv: list[str], producers: list[Producer], results: Path, capfd: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ended:
        reproduce.main(argv, producers, results)
    out, err = capfd.readouterr()
    assert isinstance(ended.value.code, int)
    return ended.value.code, out, err


def test_a_miss_exits_1_and_is_named_by_how_much(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    producers = [
        _writes("passes", tmp_path, 1.0, 0),
        _writes("misses", tmp_path, 4.5, 1),
        _writes("ungated", tmp_path, 6.0, 0),  # bench.web's way: a MISS, yet exit 0
        Producer("never", (sys.executable, "-c", "raise SystemExit(1)"), None),
    ]

    status, out, err = _run(["--skip", "never"], producers, tmp_path, capfd)

    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("bench.reproduce: 3 producers in ")
    assert lines[1].split() == ["producer", "exit", "seconds", "outcome"]
    assert lines[2].split()[:2] == ["passes", "0"]
    assert lines[2].endswith("  passed")
    assert lines[3].split()[:2] == ["misses", "1"]
    assert lines[3].endswith("  missed: 1 target")
    assert lines[4].endswith("  missed: 1 target")
    assert lines[5] == (
        "misses: MISS search, p50 (sqlite, 1,000 records): 4.50 ms, target <= 3 ms: "
        "1.50 x over the target"
    )
    assert lines[6].startswith("ungated: MISS search, p50 ")
    assert "never" not in out + err
    assert "reproduce: misses: exit 1 in " in err


def test_a_crash_or_a_missing_json_is_a_failure_not_a_miss(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    producers = [
        _writes("misses", tmp_path, 4.5, 1),
        _producer("crashes", tmp_path, "raise RuntimeError('broken')"),
        _producer("silent", tmp_path, "pass"),
        _producer("odd", tmp_path, "raise SystemExit(3)"),
        _writes("stale", tmp_path, 1.0, 1),  # exit 1, but no MISS in what it wrote
        Producer("tables", (sys.executable, "-c", "raise SystemExit(1)"), None),
    ]

    status, out, err = _run([], producers, tmp_path, capfd)

    assert status == 2
    outcomes = {line.split()[0]: line for line in out.splitlines()[2:8]}
    assert outcomes["misses"].endswith("missed: 1 target")
    assert outcomes["crashes"].endswith("failed: wrote no bench/results/crashes.json")
    assert outcomes["silent"].endswith("failed: wrote no bench/results/silent.json")
    assert outcomes["odd"].endswith("failed: exited 3")
    assert outcomes["stale"].endswith("failed: exited 1 without a MISS in its results")
    assert outcomes["tables"].endswith("failed: exited 1")  # it writes no results to judge
    assert "RuntimeError: broken" in err  # the producer's own stderr passes through


def test_only_runs_the_named_ones_in_order_and_an_unavailable_one_is_skipped_aloud(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    producers = [
        _writes("first", tmp_path, 1.0, 0),
        Producer("box", ("false",), "box.json", lambda: "needs root"),
        _writes("second", tmp_path, 1.0, 0),
        _writes("unchosen", tmp_path, 9.0, 1),
    ]

    status, out, err = _run(["--only", "second", "box", "first"], producers, tmp_path, capfd)

    assert status == 0
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["first", "box", "second"]
    assert out.splitlines()[3].split()[1:] == ["-", "0", "skipped:", "needs", "root"]
    assert "reproduce: box: skipped: needs root" in err
    assert not (tmp_path / "unchosen.json").exists()


def test_the_reproduction_runs_every_producer_of_the_readmes_then_the_tables() -> None:
    names = [producer.name for producer in reproduce.PRODUCERS]

    assert " ".join(names) == (
        "full quick peers launch launch-busy search compaction web container first-turn "
        "front-door tables"
    )
    assert all(producer.command[0] == sys.executable for producer in reproduce.PRODUCERS[:8])
    assert reproduce.PRODUCERS[-1].writes is None
    assert isinstance(reproduce.PRODUCERS[8].unavailable(), str)
    assert reproduce.PRODUCERS[9].command[1:] == ("-m", "bench", "--first-turn")
    assert reproduce.PRODUCERS[10].command[1:] == ("-m", "bench", "--front-door")
