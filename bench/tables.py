"""`python -m bench.tables`: bench/README.md's tables and the latency plot, from the JSON.

Every figure bench/README.md quotes from a benchmark (`python -m bench`, its `--quick`, `--peers`,
`--launch`, `--first-turn` and `--front-door` runs, `python -m bench.compaction`,
`bench.search`, `bench.web`, and the container step's `bench.container`) sits between two
marker comments,

    <!-- bench:table:NAME -->
    ...generated...
    <!-- /bench:table -->

and this script rewrites what is between them from bench/results/*.json (TABLES says which
file each NAME comes from, rendered by the function its producer prints it with), and writes
bench/results/latency.svg, latency against store size per backend and operation, from
latest.json. `--check` changes nothing and exits 1 when a file in READMES or the plot is not
what the JSON gives (tests/unit/test_bench_tables.py checks it). The README itself holds no
table: it links to bench/README.md, so its figures are kept in one place.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench import compaction, search
from bench.report import Measurement, measurement_from_json, number, render_table

REPOSITORY = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("results")
READMES = (Path(__file__).with_name("README.md"),)
"""The files whose marked tables this script rewrites."""
PLOT = RESULTS / "latency.svg"
PLOTTED_FROM = "latest.json"
CONTAINER_STEP = ".ci/container.sh"
"""What measures the container figures (and has bench.container write container.json)."""

_BLOCK = re.compile(
    r"(<!-- bench:table:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /bench:table -->)",
    re.DOTALL,
)

Document = dict[str, Any]


def load(results: Path, name: str) -> Document:
    """One results file of results, as written by report.write_json."""
    document: Document = json.loads((results / name).read_text(encoding="utf-8"))
    return document


def measurements(document: Document) -> list[Measurement]:
    """The document's measurements, as the run made them."""
    return [measurement_from_json(fields) for fields in document["measurements"]]


def caption(document: Document, source: str, command: str | None = None) -> str:
    """Where and when a results file was measured, by which command, in how long.

    command stands in for a file whose run does not name the command that made it.
    """
    machine, run = document["machine"], document["run"]
    when = datetime.fromisoformat(machine["date"]).strftime("%Y-%m-%d %H:%M UTC")
    sqlite = f", SQLite {machine['sqlite']}" if "sqlite" in machine else ""
    load_average = run.get("load_average_at_start", machine.get("load_average"))
    loaded = f", load average {load_average[0]:.2f} at the start" if load_average else ""
    if run.get("busy_loops"):
        loaded += f", {run['busy_loops']} busy loops running beside it"
    return (
        f"Measured {when} on {machine['cores']} cores ({machine['cpu']}, Python "
        f"{machine['python']}{sqlite}{loaded}) with `{run.get('command', command)}` in "
        f"{run['seconds']:.0f} s (`bench/results/{source}`):"
    )


def captioned(
    results: Path, source: str, render: Callable[[Document], str], command: str | None = None
) -> str:
    """A results file's table, rendered as its producer printed it, under its caption."""
    document = load(results, source)
    return f"{caption(document, source, command)}\n\n```\n{render(document)}\n```\n"


def full_table(results: Path, source: str, floors: bool = False, command: str | None = None) -> str:
    """A file in latest.json's format whole, as `python -m bench` prints it, under its caption.

    floors=False leaves out the list of what each floor is: bench/README.md describes them.
    """

    def render(document: Document) -> str:
        return render_table(measurements(document), floors=floors)

    return captioned(results, source, render, command)


def peers_summary(results: Path, source: str = "peers.json") -> str:
    """Per operation, `lazy mcp`'s p50 and each peer's, with how many times slower it is."""
    document = load(results, source)
    rows = measurements(document)
    lazy = {m.what: m for m in rows if m.what.startswith("MCP ")}
    peers = list(dict.fromkeys(m.backend for m in rows if m.what.startswith("peer ")))
    records = max(m.records for m in rows)
    header = ["operation, p50", "`lazy mcp` (SQLite)"]
    for peer in peers:
        first = next(m for m in rows if m.backend == peer)
        header.append(first.what.removeprefix("peer ").split(":")[0])
    lines = [_markdown_row(header), _markdown_row(["---"] * len(header))]
    for operation, tool in (("create", "save"), ("search", "search"), ("read", "recall")):
        own = next(m for what, m in lazy.items() if f"_{tool}" in what)
        cells = [f"{operation} (`{own.what.removeprefix('MCP ').removesuffix(', p50')}`)"]
        cells.append(f"{number(own.value)} ms")
        for peer in peers:
            cells.append(_peer_cell(rows, peer, operation))
        lines.append(_markdown_row(cells))
    return (
        f"{caption(document, source)} {records:,} records each, the same MCP client and "
        "workload; in brackets, the peer's p50 over `lazy mcp`'s.\n\n" + "\n".join(lines) + "\n"
    )


TABLES: dict[str, Callable[[Path], str]] = {
    "latest": lambda results: full_table(results, "latest.json"),
    "quick": lambda results: full_table(results, "quick.json"),
    "peers": lambda results: full_table(results, "peers.json"),
    "peers-summary": peers_summary,
    "launch": lambda results: full_table(results, "launch.json", floors=True),
    "launch-busy": lambda results: full_table(results, "launch-busy.json", floors=True),
    "compaction": lambda results: captioned(results, "compaction.json", compaction.render),
    "search": lambda results: captioned(results, "search.json", search.render_document),
    "web": lambda results: full_table(results, "web.json", floors=True),
    "container": lambda results: full_table(
        results, "container.json", floors=True, command=CONTAINER_STEP
    ),
    "first-turn": lambda results: full_table(results, "first-turn.json", floors=True),
    "front-door": lambda results: full_table(results, "front-door.json", floors=True),
}
"""Each marker's name and what it generates from the results folder."""


def rewrite(text: str, results: Path = RESULTS) -> str:
    """text with every marked table regenerated from results."""

    def generated(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"no table named {name!r} (known: {', '.join(TABLES)})")
        return f"{match[1]}{TABLES[name](results)}{match[4]}"

    return _BLOCK.sub(generated, text)


def marked_tables(text: str) -> list[str]:
    """The names of the marked tables in text, in order."""
    return [match["name"] for match in _BLOCK.finditer(text)]


# The plot: one line per (operation, backend), latency in ms against records, both log scale.
_WIDTH, _HEIGHT = 820, 500
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 250, 40, 60
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")
_DASHES = {"sqlite": "", "files": "6 4", "postgres": "2 3"}


def plot(document: Document) -> str:
    """An SVG of every millisecond measurement taken at several store sizes."""
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for m in measurements(document):
        if m.unit == "ms" and not m.missing_reason:
            series.setdefault((m.what, m.backend), []).append((m.records, m.value))
    series = {key: sorted(points) for key, points in series.items() if len(points) > 1}
    operations = list(dict.fromkeys(what for what, _ in series))
    sizes = sorted({records for points in series.values() for records, _ in points})
    values = [value for points in series.values() for _, value in points]
    x_low, x_high = math.log10(sizes[0]), math.log10(sizes[-1])
    y_low = math.floor(math.log10(min(values)))
    y_high = math.ceil(math.log10(max(values)))
    plot_width, plot_height = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x(records: int) -> float:
        return _LEFT + (math.log10(records) - x_low) / (x_high - x_low) * plot_width

    def y(value: float) -> float:
        return _TOP + (y_high - math.log10(value)) / (y_high - y_low) * plot_height

    when = datetime.fromisoformat(document["machine"]["date"]).strftime("%Y-%m-%d")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="white"/>',
        f'<text x="{_LEFT}" y="22" font-size="14">Latency against store size '
        f"(`{document['run']['command']}`, {when}; solid: sqlite, dashed: files)</text>",
    ]
    for exponent in range(y_low, y_high + 1):
        level = y(10.0**exponent)
        out.append(_line(_LEFT, level, _LEFT + plot_width, level, "#dddddd"))
        label = number(10.0**exponent)
        out.append(f'<text x="{_LEFT - 6}" y="{level + 4:.1f}" text-anchor="end">{label}</text>')
    for records in sizes:
        across = x(records)
        out.append(_line(across, _TOP, across, _TOP + plot_height, "#dddddd"))
        out.append(
            f'<text x="{across:.1f}" y="{_TOP + plot_height + 18}" '
            f'text-anchor="middle">{records:,}</text>'
        )
    out.append(
        f'<text x="{_LEFT + plot_width / 2:.1f}" y="{_HEIGHT - 18}" '
        'text-anchor="middle">records in the store</text>'
    )
    out.append(
        f'<text x="18" y="{_TOP + plot_height / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 18 {_TOP + plot_height / 2:.1f})">ms</text>'
    )
    for (what, backend), points in series.items():
        colour = _COLOURS[operations.index(what) % len(_COLOURS)]
        dash = _DASHES.get(backend, "1 2")
        path = " ".join(f"{x(records):.1f},{y(value):.1f}" for records, value in points)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + f"><title>{_escape(what)} ({backend})</title></polyline>"
        )
    for index, what in enumerate(operations):
        top = _TOP + 10 + index * 20
        colour = _COLOURS[index % len(_COLOURS)]
        left = _WIDTH - _RIGHT + 16
        out.append(_line(left, top, left + 24, top, colour, width=2))
        out.append(f'<text x="{left + 30}" y="{top + 4}">{_escape(what)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def outputs(results: Path = RESULTS) -> dict[Path, str]:
    """Every file this script writes, with what it should hold."""
    wanted = {readme: rewrite(readme.read_text(encoding="utf-8"), results) for readme in READMES}
    wanted[PLOT] = plot(load(results, PLOTTED_FROM))
    return wanted


def main(argv: Sequence[str] | None = None) -> None:
    """Rewrite bench/README.md's tables and the plot, or (--check) say which are out of date."""
    parser = argparse.ArgumentParser(prog="python -m bench.tables", description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    arguments = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(path)
        if not arguments.check:
            path.write_text(text, encoding="utf-8")
    for path in stale:
        verb = "out of date" if arguments.check else "rewritten"
        print(f"{path.relative_to(REPOSITORY)}: {verb}")
    if arguments.check and stale:
        sys.exit(1)


def _peer_cell(rows: Sequence[Measurement], peer: str, operation: str) -> str:
    timed = next(
        m
        for m in rows
        if m.backend == peer
        and m.what.partition(": ")[2].startswith((f"{operation} ", f"{operation},"))
    )
    if timed.missing_reason:
        return f"missing: {timed.missing_reason}"
    ratio = next(m for m in rows if m.what == f"{operation}: {peer} p50 / lazy mcp p50")
    verdict = "" if ratio.target is None else f", {ratio.verdict}"
    return f"{number(timed.value)} ms ({number(ratio.value)} x{verdict})"


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, width: float = 1) -> str:
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f'stroke="{colour}" stroke-width="{width}"/>'
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


if __name__ == "__main__":
    main()
