"""`python -m bench.first_turn`: what a session meets in its first turn, in one run.

Run from the repository root. It measures `lazy mcp` from spawn to `initialize` and
`tools/list` answered, as whole processes from a wheel install against `python -c "import
sqlite3"` (bench/mcp_start.py), with no store and at each size (default 1,000 and 100,000
records), quiet and with both cores busy. It prints the table, writes
bench/results/first-turn.json, names every MISS on stderr with by how much, and exits 1 if there
is one (0 with --no-gate). `python -m bench.tables` puts the table in bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import mcp_start
from bench.plan import Fixtures, Plan
from bench.report import Measurement, misses, render_table, write_json

SIZES = (1_000, 100_000)
"""The store sizes of a run, beside no store at all: the first-turn issue's."""
DEFAULT_JSON = Path(__file__).with_name("results") / "first-turn.json"


async def run(plan: Plan) -> list[Measurement]:
    """Every measurement of the first turn, for the plan's sizes."""
    fixtures = Fixtures(plan)
    stores = [await fixtures.store("sqlite", records) for records in plan.sizes]
    return mcp_start.start_up(plan, stores, mcp_start.empty_store(plan.workdir))


def main(argv: Sequence[str] | None = None) -> None:
    """Measure, print the table, write the JSON, and exit 1 on a MISS unless --no-gate."""
    parser = argparse.ArgumentParser(prog="python -m bench.first_turn", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES, metavar="N")
    parser.add_argument("--repeat", type=int, default=20, metavar="N", help="pairs per row")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH")
    parser.add_argument("--no-gate", action="store_true", help="exit 0 even on a MISS")
    arguments = parser.parse_args(argv)
    started, load_at_start = time.perf_counter(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="lazy-first-turn-") as workdir:
        plan = Plan(
            sizes=tuple(sorted(arguments.sizes)),
            backends=("sqlite",),
            repeat=arguments.repeat,
            requests=0,
            saves=0,
            budget_seconds=0,
            workdir=Path(workdir),
        )
        measurements = asyncio.run(run(plan))
    seconds = time.perf_counter() - started
    print(render_table(measurements))
    settings = {
        "command": " ".join(
            ["python -m bench.first_turn", *(argv if argv is not None else sys.argv[1:])]
        ),
        "sizes": list(plan.sizes),
        "repeat": plan.repeat,
        "load_average_at_start": load_at_start,
    }
    write_json(arguments.json, measurements, settings, seconds)
    missed = misses(measurements)
    for line in missed:
        print(line, file=sys.stderr)
    if missed and not arguments.no_gate:
        sys.exit(1)


if __name__ == "__main__":
    main()
