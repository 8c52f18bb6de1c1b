"""`python -m bench.search` at a tiny size: relevance scored, searches timed, both backends.

Timings are the benchmark's report, never a test's verdict.
"""

from __future__ import annotations

from pathlib import Path

from bench.search import latency, relevance, render
from tests.support.search_relevance import QUERIES


async def test_a_tiny_run_scores_relevance_and_times_every_query(tmp_path: Path) -> None:
    relevances = [await relevance(backend, tmp_path) for backend in ("sqlite", "files")]
    latencies = [await latency(backend, 50, 1, tmp_path) for backend in ("sqlite", "files")]

    assert relevances[0].mean_reciprocal_rank == relevances[1].mean_reciprocal_rank > 0.8
    assert relevances[0].queries == len(QUERIES)
    assert all(row.searches > len(QUERIES) and row.p50_ms <= row.p95_ms for row in latencies)
    table = render(relevances, latencies)
    assert "MRR" in table
    assert "p95 ms" in table
