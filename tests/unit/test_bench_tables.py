"""bench/README.md's benchmark tables and the latency plot are what bench/results/*.json gives.

`python -m bench.tables` writes them; these tests hold the committed files to it, and the
generator to being a function of the JSON alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import compaction, search, tables
from bench.report import Measurement, Target, machine, missing, render_table, write_json
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


def test_a_benchmark_of_its_own_format_is_rendered_by_its_producer_s_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compaction.main(["--sizes", "10", "--json", str(tmp_path / "compaction.json")])
    printed = capsys.readouterr().out
    relevance = search.Relevance("sqlite", 232, 43, 0.9, 0.8, 0.95, ("who owns webhooks",))
    latency = search.Latency("files", 1_000, 144, 27.4, 0.41, 1.78, 3.2)
    document = {
        "machine": {**machine(), "sqlite": "3.40.1"},
        "run": {"command": "python -m bench.search", "seconds": 52.0},
        **search.results([relevance], [latency]),
    }
    (tmp_path / "search.json").write_text(json.dumps(document), encoding="utf-8")
    text = "<!-- bench:table:compaction -->\n<!-- /bench:table -->\n" + (
        "<!-- bench:table:search -->\n<!-- /bench:table -->\n"
    )

    generated = tables.rewrite(text, tmp_path)

    assert f"```\n{printed}```\n<!-- /bench:table -->\n<!-- bench:table:search" in generated
    assert "with `python -m bench.compaction --sizes 10 --json " in generated
    assert f"```\n{search.render([relevance], [latency])}\n```\n" in generated
    assert "Python " in generated
    assert ", SQLite 3.40.1, load average " in generated
    assert "files misses" not in generated
    assert "sqlite misses: who owns webhooks" in generated


def test_a_results_file_that_names_no_command_is_captioned_with_its_producer(
    tmp_path: Path,
) -> None:
    row = Measurement("container image size", "podman", 0, 281.3, "MB", floor=178.1)
    write_json(tmp_path / "container.json", [row], {"image": "lazy-memory:ci"}, 97.6)

    generated = tables.TABLES["container"](tmp_path)

    assert "with `.ci/container.sh` in 98 s (`bench/results/container.json`):" in generated
    assert render_table([row]) in generated  # with its floors, as bench.container prints it


def test_bench_readme_marks_every_table_and_every_table_has_its_json() -> None:
    (bench_readme,) = tables.READMES

    marked = tables.marked_tables(bench_readme.read_text(encoding="utf-8"))

    assert sorted(marked) == sorted(tables.TABLES)
    for name, generate in tables.TABLES.items():
        assert generate(tables.RESULTS).startswith("Measured "), name


def test_the_readme_holds_no_benchmark_table_but_links_to_them() -> None:
    readme = (tables.REPOSITORY / "README.md").read_text(encoding="utf-8")

    assert tables.marked_tables(readme) == []
    assert "(bench/README.md)" in readme


def test_the_committed_tables_and_plot_are_what_the_committed_json_gives() -> None:
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
