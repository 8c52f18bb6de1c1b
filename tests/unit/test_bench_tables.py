"""The READMEs' benchmark tables and the latency plot are what bench/results/*.json gives.

`python -m bench.tables` writes them; these tests hold the committed files to it, and the
generator to being a function of the JSON alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import tables
from bench.report import Measurement, Target, missing, render_table, write_json
from bench.saves import RevisionCheck


def _results(folder: Path) -> Path:
    rows = [
        Measurement("lazy/search, p50", "sqlite", 1_000, 1.2, "ms", floor=0.2, target=Target(3)),
        Measurement("lazy/search, p50", "sqlite", 10_000, 2.5, "ms", floor=0.2, target=Target(3)),
        Measurement(
            "cold start", "files", 1_000, 500, "ms", floor=350, target=Target(1.2, times_floor=True)
        ),
        Measurement("saves", "files", 10_000, 900, "saves/s", target=Target(1_000, at_least=True)),
        missing("peer other 1.0: create, p50", "other", 1_000, "npm is not on PATH"),
    ]
    write_json(folder / "latest.json", rows, {"command": "python -m bench"}, 12.0)
    write_json(folder / "quick.json", rows, {"command": "python -m bench --quick"}, 3.0)
    return folder


def test_a_table_is_regenerated_between_its_markers_and_the_same_every_time(
    tmp_path: Path,
) -> None:
    results = _results(tmp_path)
    text = (
        "intro\n<!-- bench:table:latest -->\nstale\n<!-- /bench:table -->\nmiddle\n"
        "<!-- bench:table:quick -->\n<!-- /bench:table -->\nend\n"
    )

    once = tables.rewrite(text, results)

    assert once == tables.rewrite(text, results) == tables.rewrite(once, results)
    assert "stale" not in once
    assert once.startswith("intro\n<!-- bench:table:latest -->\nMeasured ")
    assert once.endswith("<!-- /bench:table -->\nend\n")
    assert "`python -m bench --quick` in 3 s" in once
    assert "not measured: npm is not on PATH" in once
    assert tables.marked_tables(once) == ["latest", "quick"]


def test_the_json_gives_back_the_table_the_run_printed(tmp_path: Path) -> None:
    results = _results(tmp_path)
    document = json.loads((results / "latest.json").read_text(encoding="utf-8"))
    printed = render_table(tables.measurements(document), floors=False)

    assert "MISS" in printed
    assert "PASS" in printed
    assert "missing" in printed
    assert [m.verdict for m in tables.measurements(document)] == [
        m["verdict"] for m in document["measurements"]
    ]


def test_the_plot_is_the_same_svg_every_time(tmp_path: Path) -> None:
    document = tables.load(_results(tmp_path), "latest.json")

    svg = tables.plot(document)

    assert svg == tables.plot(document)
    assert svg.startswith("<svg ")
    assert svg.endswith("</svg>\n")
    assert svg.count("<polyline") == 1  # only lazy/search has two sizes


def test_the_committed_readmes_and_plot_are_what_the_committed_json_gives() -> None:
    for path, wanted in tables.outputs().items():
        assert path.read_text(encoding="utf-8") == wanted, (
            f"{path} is not what bench/results/*.json gives: run `python -m bench.tables`"
        )
    for readme in tables.READMES:
        assert tables.marked_tables(readme.read_text(encoding="utf-8"))


def test_lost_and_unacknowledged_writes_are_the_two_differences_of_the_sets() -> None:
    check = RevisionCheck(
        acknowledged={("a", 1), ("a", 2), ("b", 1)}, stored={("a", 1), ("b", 1), ("c", 4)}
    )

    assert check.lost == {("a", 2)}
    assert check.unacknowledged == {("c", 4)}
