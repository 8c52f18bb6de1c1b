"""bench/flatness.py's derived rows, from hand-made measurements (no process, no timing)."""

from __future__ import annotations

import pytest

from bench.flatness import FLATNESS_LIMIT, RECALL, flatness
from bench.report import INFO, MISS, MISSING, PASS, Measurement, Target


def _row(what: str, backend: str, records: int, value: float) -> Measurement:
    return Measurement(what, backend, records, value, "ms")


def _by_key(rows: list[Measurement]) -> dict[tuple[str, str], Measurement]:
    return {(row.what, row.backend): row for row in rows}


def test_the_cost_at_100k_is_compared_with_the_cost_at_1k_against_the_limit() -> None:
    measured = [
        _row("lazy/search, p50", "sqlite", 1_000, 1.0),
        _row("lazy/search, p50", "sqlite", 10_000, 9.0),
        _row("lazy/search, p50", "sqlite", 100_000, 1.4),
        _row("lazy/search, p50", "postgres", 1_000, 2.0),
        _row("lazy/search, p50", "postgres", 100_000, 8.0),
        _row("save, 1 client sequential, rate", "sqlite", 1_000, 1_000.0),
        _row("save, 1 client sequential, rate", "sqlite", 100_000, 800.0),
        _row(RECALL, "files", 1_000, 0.5),
        _row(RECALL, "files", 100_000, 0.5),
    ]

    rows = _by_key(flatness(measured))

    search = rows[("lazy/search, p50 / at 1,000", "sqlite")]
    assert (search.records, search.value, search.unit, search.verdict) == (100_000, 1.4, "x", PASS)
    assert search.target == Target(FLATNESS_LIMIT)
    assert rows[("lazy/search, p50 / at 1,000", "postgres")].value == 4.0
    assert rows[("lazy/search, p50 / at 1,000", "postgres")].verdict == MISS
    # A save's cost is the inverse of its rate: 800 saves/s costs 1.25 x 1,000 saves/s.
    save = rows[("save, mean cost / at 1,000", "sqlite")]
    assert save.value == pytest.approx(1.25)
    assert save.verdict == PASS
    assert rows[("lazy/memory/recall(name), p50 / at 1,000", "files")].value == 1.0
    assert len(rows) == 4


def test_a_run_not_spanning_1k_to_100k_compares_largest_with_smallest_without_a_target() -> None:
    measured = [
        _row(RECALL, "sqlite", 20, 0.4),
        _row(RECALL, "sqlite", 40, 0.6),
        _row(RECALL, "sqlite", 30, 9.0),
    ]

    [row] = flatness(measured)

    assert (row.what, row.records, row.verdict) == (
        "lazy/memory/recall(name), p50 / at 20",
        40,
        INFO,
    )
    assert row.value == pytest.approx(1.5)


def test_a_backend_lacking_an_end_of_the_span_is_reported_missing() -> None:
    measured = [
        _row("lazy/search, p50", "sqlite", 1_000, 1.0),
        _row("lazy/search, p50", "sqlite", 100_000, 1.2),
        _row("lazy/search, p50", "postgres", 1_000, 1.0),
        _row("lazy/search, p50", "postgres", 10_000, 1.0),
        Measurement("lazy/search, p50", "files", 100_000, 0.0, "", missing_reason="no server"),
        _row("lazy/search, p50", "files", 1_000, 1.0),
    ]

    rows = _by_key(flatness(measured))

    assert rows[("lazy/search, p50 / at 1,000", "sqlite")].verdict == PASS
    for backend in ("postgres", "files"):
        row = rows[("lazy/search, p50 / at 1,000", backend)]
        assert (row.verdict, row.records) == (MISSING, 100_000)
        assert "not measured at 100,000 records" in row.missing_reason


def test_nothing_is_derived_from_one_size_or_from_rows_of_other_operations() -> None:
    measured = [
        _row("lazy/search, p50", "sqlite", 1_000, 1.0),
        _row("lazy/search, p95", "sqlite", 1_000, 1.0),
        _row("lazy/search, p95", "sqlite", 100_000, 9.0),
    ]

    assert flatness(measured) == []
