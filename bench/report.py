"""Measurements, their targets and verdicts, and the two ways out: a text table and JSON.

A measurement is one number (a median, a percentile, a rate, a size) quoted beside its floor,
the same kind of number for the least work that surface can do, measured in the same run,
and beside its target. The verdict is PASS or MISS against the target, `info` when the
issue sets no target at that store size, or `missing` when it could not be measured here (a
peer that would not install), with the reason.
"""

from __future__ import annotations

import json
import math
import os
import platform
import queue
import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PASS, MISS, INFO, MISSING = "PASS", "MISS", "info", "missing"


@dataclass(frozen=True)
class Target:
    """A limit on a measurement: at most (or at least) a value, or a multiple of its floor."""

    limit: float
    at_least: bool = False
    times_floor: bool = False

    def bound(self, floor: float | None) -> float:
        """The limit in the measurement's unit."""
        if not self.times_floor:
            return self.limit
        if floor is None:
            raise ValueError("a target relative to the floor needs a floor")
        return self.limit * floor

    def describe(self, unit: str) -> str:
        """The target as the table prints it, e.g. `<= 3 ms` or `<= 1.2 x floor`."""
        sign = ">=" if self.at_least else "<="
        if self.times_floor:
            return f"{sign} {number(self.limit)} x floor"
        return f"{sign} {number(self.limit)} {unit}"


@dataclass(frozen=True)
class Measurement:
    """One row of the report."""

    what: str
    backend: str
    records: int
    value: float
    unit: str
    floor: float | None = None
    floor_what: str = ""
    target: Target | None = None
    samples: int = 0
    note: str = ""
    missing_reason: str = ""
    """Why nothing could be measured (the verdict is then `missing`)."""

    @property
    def verdict(self) -> str:
        """PASS, MISS, info (no target at this size), or missing (not measured here)."""
        if self.missing_reason:
            return MISSING
        if self.target is None:
            return INFO
        bound = self.target.bound(self.floor)
        met = self.value >= bound if self.target.at_least else self.value <= bound
        return PASS if met else MISS

    @property
    def shortfall(self) -> str:
        """By how much a MISS misses its target, e.g. `1.6 x over the target`; else ""."""
        if self.target is None or self.verdict != MISS:
            return ""
        bound = self.target.bound(self.floor)
        if self.target.at_least:
            ratio = bound / self.value if self.value else float("inf")
            return f"{number(ratio)} x under the target"
        return f"{number(self.value / bound)} x over the target" if bound else "over the target"

    @property
    def times_floor(self) -> float | None:
        """The value as a multiple of its floor."""
        if not self.floor:
            return None
        return self.value / self.floor

    def as_json(self) -> dict[str, Any]:
        """Every field, the verdict and the target in words, for latest.json."""
        fields = asdict(self)
        fields["target"] = None if self.target is None else self.target.describe(self.unit)
        fields["target_limit"] = None if self.target is None else self.target.bound(self.floor)
        fields["times_floor"] = self.times_floor
        fields["verdict"] = self.verdict
        return fields


def measurement_from_json(fields: dict[str, Any]) -> Measurement:
    """The measurement a results file's entry (Measurement.as_json) was written from."""
    target = None
    if fields.get("target"):
        described: str = fields["target"]
        at_least, times_floor = described.startswith(">="), described.endswith(" x floor")
        bound = float(fields["target_limit"])
        limit = bound / fields["floor"] if times_floor else bound
        target = Target(limit, at_least=at_least, times_floor=times_floor)
    return Measurement(
        what=fields["what"],
        backend=fields["backend"],
        records=fields["records"],
        value=fields["value"],
        unit=fields["unit"],
        floor=fields.get("floor"),
        floor_what=fields.get("floor_what", ""),
        target=target,
        samples=fields.get("samples", 0),
        note=fields.get("note", ""),
        missing_reason=fields.get("missing_reason", ""),
    )


def missing(what: str, backend: str, records: int, reason: str) -> Measurement:
    """A row for what could not be measured here, and why."""
    return Measurement(what, backend, records, 0.0, "", missing_reason=reason)


def percentile(samples: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (share in 0..1) of samples."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def median(samples: Sequence[float]) -> float:
    """The median of samples."""
    return statistics.median(samples)


def thread_round_trip_us(count: int = 2_000) -> float:
    """The p50 of handing an item to another thread and back, in microseconds.

    Every request to the engine crosses threads and processes several times, so this sets
    the pace of small requests. On a virtual machine it depends on the host: an idle vCPU
    takes far longer to wake (about 75 us here) than a busy one (about 5 us).
    """
    there: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    back: queue.SimpleQueue[int] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    worker = threading.Thread(target=echo)
    worker.start()
    samples = []
    for item in range(count):
        start = time.perf_counter()
        there.put(item)
        back.get()
        samples.append((time.perf_counter() - start) * 1e6)
    there.put(None)
    worker.join()
    return median(samples)


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        # Other work on the machine slows every number: the load says how busy it was.
        "load_average": os.getloadavg(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


_COLUMNS = ("what", "backend", "records", "value", "floor", "x floor", "target", "verdict")


def misses(measurements: Sequence[Measurement]) -> list[str]:
    """One line per measurement that missed its target: what, where, the value, by how much."""
    return [
        f"MISS {m.what} ({m.backend}, {m.records:,} records): {_quantity(m.value, m.unit)}, "
        f"target {m.target.describe(m.unit) if m.target else ''}: {m.shortfall}"
        for m in measurements
        if m.verdict == MISS
    ]


def missing_lines(measurements: Sequence[Measurement]) -> list[str]:
    """One line per measurement that could not be taken here, with the reason."""
    return [
        f"MISSING {m.what} ({m.backend}): {m.missing_reason}"
        for m in measurements
        if m.verdict == MISSING
    ]


def render_table(measurements: Sequence[Measurement], floors: bool = True) -> str:
    """The measurements as a plain text table, with notes (and what each floor is) under it."""
    rows = [_COLUMNS]
    # A note shared by several rows is printed once, under one number.
    distinct = dict.fromkeys(_note(m) for m in measurements if _note(m))
    notes = {note: number for number, note in enumerate(distinct, start=1)}
    for m in measurements:
        rows.append(
            (
                m.what + (f" [{notes[_note(m)]}]" if _note(m) else ""),
                m.backend,
                f"{m.records:,}",
                "" if m.missing_reason else _quantity(m.value, m.unit),
                _quantity(m.floor, m.unit),
                "" if m.times_floor is None else f"{m.times_floor:.2f}",
                "" if m.target is None else m.target.describe(m.unit),
                m.verdict,
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(_COLUMNS))]
    lines = [
        "  ".join(
            cell.ljust(width) if column in (0, 1, 6, 7) else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    lines += [f"[{number}] {note}" for note, number in notes.items()]
    if floors:
        described = dict.fromkeys(f"{m.what}: {m.floor_what}" for m in measurements if m.floor_what)
        lines += ["", "Floors (the least work the same surface can do, measured in this run):"]
        lines += [f"- {floor}" for floor in described]
    return "\n".join(lines)


def write_json(
    path: Path, measurements: Sequence[Measurement], settings: dict[str, Any], seconds: float
) -> None:
    """Write the machine, the run's settings and every measurement to path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine(),
        "run": {**settings, "seconds": round(seconds, 1)},
        "measurements": [m.as_json() for m in measurements],
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _note(measurement: Measurement) -> str:
    if measurement.missing_reason:
        return f"not measured: {measurement.missing_reason}"
    return measurement.note


def _quantity(value: float | None, unit: str) -> str:
    return "" if value is None else f"{number(value)} {unit}"


def number(value: float) -> str:
    """About three significant figures, thousands separated: 0.412, 7.31, 1,466, 0."""
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
