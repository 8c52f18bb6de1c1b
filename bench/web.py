"""`python -m bench.web`: how fast `lazy web` starts and serves its index page (issue 21).

Run from the repository root: `python -m bench.web [--sizes 10000] [--backends sqlite files]
[--repeat 5] [--requests 30] [--json PATH]`. For each store (the realistic corpus, built as
`python -m bench` builds it) it measures, with the real process:

- start-up: from spawning `lazy web --listen 127.0.0.1:0` to the first 200 answer for `/`
  (the median of --repeat starts); the floor is `python -c "import sqlite3"`;
- the index page: the wall time of `GET /` (a builder's section, every record line linked)
  over loopback, warm (the page is kept until the store's change marker moves), median and
  p95 of --requests, and of the first `GET /?role=agent`, which reads the store and renders
  the page afresh, as the first view after a write does; the floor is `GET /static/web.css`
  from the same server, the least work it answers.

It needs the web extra. The issue's targets (under a second, under 100 ms at 10,000 records)
are quoted beside each number; nothing fails on them. Not part of `python -m bench`: it
prints its own table and writes bench/results/web.json.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import cli
from bench.client import lazy_command
from bench.plan import Plan
from bench.report import Measurement, Target, median, percentile, render_table, write_json
from bench.stores import EMBEDDED_BACKENDS, Store, build_store

DEFAULT_JSON = Path(__file__).with_name("results") / "web.json"
_SERVING = re.compile(r"lazy web: serving http://127\.0\.0\.1:(\d+)/")
_START_TARGET = Target(1_000)
_RENDER_TARGET = Target(100)
_TARGET_RECORDS = 10_000


def main(argv: Sequence[str] | None = None) -> None:
    """Build the stores, measure, print the table and write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.web", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[_TARGET_RECORDS], metavar="N")
    parser.add_argument("--backends", nargs="+", choices=EMBEDDED_BACKENDS, default=["sqlite"])
    parser.add_argument("--repeat", type=int, default=5, metavar="N", help="starts measured")
    parser.add_argument("--requests", type=int, default=30, metavar="N", help="pages measured")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH")
    arguments = parser.parse_args(argv)
    started = time.perf_counter()
    measurements: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="lazy-bench-web-") as workdir:
        plan = Plan(
            sizes=tuple(arguments.sizes),
            backends=tuple(arguments.backends),
            repeat=arguments.repeat,
            requests=arguments.requests,
            saves=0,
            budget_seconds=0,
            workdir=Path(workdir),
        )
        floor = cli.floor_ms(plan)
        for backend in plan.backends:
            for records in plan.sizes:
                store = asyncio.run(build_store(backend, records, plan.workdir))
                measurements += measure(store, floor, arguments.repeat, arguments.requests)
    seconds = time.perf_counter() - started
    print(render_table(measurements))
    settings = {
        "command": " ".join(["python -m bench.web", *(argv if argv is not None else sys.argv[1:])]),
        "sizes": list(plan.sizes),
        "backends": list(plan.backends),
        "repeat": plan.repeat,
        "requests": plan.requests,
    }
    write_json(arguments.json, measurements, settings, seconds)
    print(f"\n{len(measurements)} measurements in {seconds:.0f} s; written to {arguments.json}")


def measure(store: Store, floor_ms: float, repeat: int, requests: int) -> list[Measurement]:
    """Start-up and index-page times of `lazy web` on store."""
    starts = []
    for _ in range(repeat):
        elapsed, process, _ = _start(store)
        _stop(process)
        starts.append(elapsed)
    _, process, port = _start(store)
    try:
        first = _get(port, "/?role=agent")  # read and rendered afresh
        pages = [_get(port, "/") for _ in range(requests)]
        statics = [_get(port, "/static/web.css") for _ in range(requests)]
    finally:
        _stop(process)
    target = store.records == _TARGET_RECORDS
    floor_page = median(statics)
    return [
        Measurement(
            "lazy web: spawn to first 200 on /",
            store.backend,
            store.records,
            median(starts),
            "ms",
            floor=floor_ms,
            floor_what='python -c "import sqlite3"',
            target=_START_TARGET if target else None,
            samples=repeat,
        ),
        Measurement(
            "lazy web: GET / (index page), p50",
            store.backend,
            store.records,
            median(pages),
            "ms",
            floor=floor_page,
            floor_what="GET /static/web.css",
            target=_RENDER_TARGET if target else None,
            samples=requests,
        ),
        Measurement(
            "lazy web: first GET /?role=agent, rendered",
            store.backend,
            store.records,
            first,
            "ms",
            floor=floor_page,
            floor_what="GET /static/web.css",
            target=_RENDER_TARGET if target else None,
            samples=1,
        ),
        Measurement(
            "lazy web: GET / (index page), p95",
            store.backend,
            store.records,
            percentile(pages, 0.95),
            "ms",
            floor=floor_page,
            floor_what="GET /static/web.css",
            samples=requests,
        ),
    ]


def _start(store: Store) -> tuple[float, subprocess.Popen[str], int]:
    """Spawn `lazy web` on store; the ms to its first 200 for `/`, the process, its port."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [*lazy_command(), "web", "--listen", "127.0.0.1:0"],
        cwd=store.root,
        env=store.environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    found = _SERVING.search(process.stderr.readline())
    if found is None:
        _stop(process)
        raise RuntimeError(f"lazy web did not start: {process.stderr.read()}")
    port = int(found.group(1))
    _get(port, "/")
    return (time.perf_counter() - began) * 1000, process, port


def _get(port: int, path: str) -> float:
    """The ms one GET takes, answer read whole; anything but 200 is an error."""
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        if answer.status != 200:
            raise RuntimeError(f"GET {path} answered {answer.status}")
    finally:
        connection.close()
    return (time.perf_counter() - began) * 1000


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


if __name__ == "__main__":
    main()
