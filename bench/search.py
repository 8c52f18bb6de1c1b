"""Search: relevance on the relevance set, and latency at 1k, 10k and 100k records.

Run from the repository root: `python -m bench.search [--quick] [--repeat N] [--json PATH]`.
Relevance fills a fresh store of each backend with tests/support/search_relevance.py's records and
scores its rankings (mean reciprocal rank, top-1 and top-3 hit rates). Latency builds the
benchmark corpus at each size (bench/stores.py, in bulk) and times Storage.search for the
relevance queries and a few broad ones: `first` is the first search after opening the store
(for files it builds the in-memory index), p50 and p95 are over every later search.
`--quick` stops at 10k records. PostgreSQL joins in when LAZY_PG_DSN is set, up to
bench.stores.POSTGRES_MAX_RECORDS records.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.corpus import CORPUS_ACTOR, CORPUS_START
from bench.report import machine
from bench.stores import POSTGRES_MAX_RECORDS, Store, available_backends, build_store
from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings, load_settings
from lazy_memory.engine.constants import DEFAULT_SEARCH_LIMIT
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.search_model import SearchQuery
from lazy_memory.engine.search_parser import parse_query
from tests.support.search_relevance import QUERIES, RANKED_HITS, quality, relevance_records

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
DEFAULT_JSON = Path(__file__).with_name("results") / "search.json"
BROAD_QUERIES = ("deploy", "the user", "type:project", "name:webhooks*", "redis -cache")
"""Queries that match thousands of records at 100k, so latency is not only of easy ones."""


@dataclass(frozen=True)
class Relevance:
    """One backend's ranking quality on the relevance set."""

    backend: str
    records: int
    queries: int
    mean_reciprocal_rank: float
    top1: float
    top3: float
    misses: tuple[str, ...]


@dataclass(frozen=True)
class Latency:
    """One backend's search latency at one store size, in milliseconds."""

    backend: str
    records: int
    searches: int
    first_ms: float
    p50_ms: float
    p95_ms: float
    max_ms: float


async def relevance(backend: str, parent: Path) -> Relevance:
    """Fill a fresh store with the relevance set and score how it ranks the queries."""
    records = relevance_records()
    root = parent / f"relevance-{backend}"
    (root / ".git").mkdir(parents=True)
    storage = await open_storage(_settings(Store(backend, len(records), root)))
    try:
        for minute, record in enumerate(records):
            at = CORPUS_START + timedelta(minutes=minute)
            await storage.save_record(record, actor=CORPUS_ACTOR, at=at)
        ranked = {
            query: [hit.name for hit in await storage.search(parse_query(query), RANKED_HITS)]
            for query, _ in QUERIES
        }
    finally:
        await storage.aclose()
    scored = quality(ranked)
    return Relevance(
        backend,
        len(records),
        len(QUERIES),
        scored.mean_reciprocal_rank,
        scored.top1,
        scored.top3,
        scored.misses,
    )


async def latency(backend: str, records: int, repeat: int, parent: Path) -> Latency:
    """Time searches on a store of the corpus at this size."""
    store = await build_store(backend, records, parent)
    queries = [parse_query(text) for text in (*(query for query, _ in QUERIES), *BROAD_QUERIES)]
    storage = await open_storage(_settings(store))
    try:
        first = await _timed(storage, queries[0])
        samples = [await _timed(storage, query) for _ in range(repeat) for query in queries]
    finally:
        await storage.aclose()
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return Latency(backend, records, len(samples), first, cuts[49], cuts[94], max(samples))


async def _timed(storage: Storage, query: SearchQuery) -> float:
    started = time.perf_counter()
    await storage.search(query, DEFAULT_SEARCH_LIMIT)
    return (time.perf_counter() - started) * 1000


def _settings(store: Store) -> Settings:
    return load_settings(store.root, store.environment())


def results(relevances: list[Relevance], latencies: list[Latency]) -> dict[str, Any]:
    """The measurements as search.json holds them."""
    return {
        "relevance": [asdict(r) for r in relevances],
        "latency": [asdict(row) for row in latencies],
    }


def render(relevances: list[Relevance], latencies: list[Latency]) -> str:
    """Both tables, as `python -m bench.search` prints them."""
    return render_document(results(relevances, latencies))


def render_document(document: Mapping[str, Any]) -> str:
    """Both tables of a search.json (or of results()), as plain right-aligned text."""
    relevances, latencies = document["relevance"], document["latency"]
    quality_rows = [("backend", "records", "queries", "MRR", "top-1", "top-3")] + [
        (
            r["backend"],
            str(r["records"]),
            str(r["queries"]),
            f"{r['mean_reciprocal_rank']:.3f}",
            f"{r['top1']:.3f}",
            f"{r['top3']:.3f}",
        )
        for r in relevances
    ]
    latency_rows = [("backend", "records", "searches", "first ms", "p50 ms", "p95 ms", "max ms")]
    latency_rows += [
        (
            row["backend"],
            str(row["records"]),
            str(row["searches"]),
            f"{row['first_ms']:.1f}",
            f"{row['p50_ms']:.2f}",
            f"{row['p95_ms']:.2f}",
            f"{row['max_ms']:.1f}",
        )
        for row in latencies
    ]
    misses = [f"  {r['backend']} misses: {', '.join(r['misses']) or 'none'}" for r in relevances]
    return "\n".join(
        [
            "Relevance (tests/support/search_relevance.py)",
            _table(quality_rows),
            *misses,
            "",
            f"Latency of Storage.search (limit {DEFAULT_SEARCH_LIMIT})",
            _table(latency_rows),
        ]
    )


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    )


async def run(sizes: tuple[int, ...], repeat: int) -> tuple[list[Relevance], list[Latency]]:
    """Every measurement, each backend on its own fresh stores under one temporary folder."""
    backends = available_backends()
    with tempfile.TemporaryDirectory(prefix="lazy-bench-search-") as directory:
        parent = Path(directory)
        relevances = [await relevance(backend, parent) for backend in backends]
        latencies = [
            await latency(backend, size, repeat, parent)
            for size in sizes
            for backend in backends
            if backend != "postgres" or size <= POSTGRES_MAX_RECORDS
        ]
    return relevances, latencies


def main(argv: list[str] | None = None) -> None:
    """Measure, print the tables, and write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k and 10k records only")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="runs per query")
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where the numbers go"
    )
    arguments = parser.parse_args(argv)
    sizes = QUICK_SIZES if arguments.quick else SIZES
    started = time.perf_counter()
    relevances, latencies = asyncio.run(run(sizes, arguments.repeat))
    print(render(relevances, latencies))
    numbers = {
        "machine": {**machine(), "sqlite": sqlite3.sqlite_version},
        "run": {
            "command": " ".join(
                ["python -m bench.search", *(argv if argv is not None else sys.argv[1:])]
            ),
            "sizes": list(sizes),
            "repeat": arguments.repeat,
            "seconds": round(time.perf_counter() - started, 1),
        },
        **results(relevances, latencies),
    }
    arguments.json.parent.mkdir(parents=True, exist_ok=True)
    arguments.json.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
