"""What the mechanical compact saves: injected memory-section bytes with and without it.

Run from the repository root: `python -m bench.compaction [--sizes 10 60 500 5000]
[--seed 0] [--json PATH]`. Each size gets a fresh temporary SQLite store filled with the
realistic corpus; the section is measured exactly as the never-grow rule measures it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import CORPUS_ACTOR, fill_store
from bench.report import machine
from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.compaction import (
    MECHANICAL,
    mechanical_summary,
    new_compact,
    shrinks,
    sizes,
)

DEFAULT_SIZES = (10, 60, 500, 5_000)
DEFAULT_JSON = Path(__file__).with_name("results") / "compaction.json"
_COLUMNS = ("records", "plain bytes", "compact bytes", "saved bytes", "saved %", "never-grow")


@dataclass(frozen=True)
class Measurement:
    """The section's size for one store, without a compact and with the mechanical one."""

    records: int
    bytes_without: int
    bytes_with: int
    rejected: bool

    @property
    def saved_bytes(self) -> int:
        """Bytes the compact removes from the section (negative if it adds some)."""
        return self.bytes_without - self.bytes_with

    @property
    def saved_percent(self) -> float:
        """The saving as a percentage of the section without a compact."""
        return 100 * self.saved_bytes / self.bytes_without


async def measure(count: int, seed: int) -> Measurement:
    """Fill a temporary SQLite store with count records and measure both sections."""
    with tempfile.TemporaryDirectory(prefix="lazy-bench-") as directory:
        root = Path(directory)
        storage = await open_storage(Settings(root=root, data_dir=root))
        try:
            await fill_store(storage, count, seed)
            records = await storage.list_records()
        finally:
            await storage.aclose()
    candidate = new_compact(
        records,
        mechanical_summary(records),
        generator=MECHANICAL,
        model=None,
        generated_at=datetime.now(UTC),
        generated_by=CORPUS_ACTOR,
    )
    bytes_without, bytes_with = sizes(records, candidate)
    return Measurement(count, bytes_without, bytes_with, rejected=not shrinks(records, candidate))


def render(document: Mapping[str, Any]) -> str:
    """A compaction.json's measurements as a plain, right-aligned text table."""
    rows = [_COLUMNS] + [
        (
            str(m["records"]),
            str(m["bytes_without"]),
            str(m["bytes_with"]),
            str(m["saved_bytes"]),
            f"{m['saved_percent']:.1f}",
            "rejected" if m["rejected"] else "accepted",
        )
        for m in document["measurements"]
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(_COLUMNS))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    )


def main(argv: list[str] | None = None) -> None:
    """Measure every requested size, print the table, and write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.compaction", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, metavar="N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--json", type=Path, default=DEFAULT_JSON, metavar="PATH", help="where the numbers go"
    )
    arguments = parser.parse_args(argv)
    started = time.perf_counter()
    measurements = [asyncio.run(measure(count, arguments.seed)) for count in arguments.sizes]
    run = {
        "command": " ".join(
            ["python -m bench.compaction", *(argv if argv is not None else sys.argv[1:])]
        ),
        "sizes": list(arguments.sizes),
        "seed": arguments.seed,
        "seconds": round(time.perf_counter() - started, 1),
    }
    numbers = [
        {**asdict(m), "saved_bytes": m.saved_bytes, "saved_percent": m.saved_percent}
        for m in measurements
    ]
    document = {"machine": machine(), "run": run, "measurements": numbers}
    print(render(document))
    arguments.json.parent.mkdir(parents=True, exist_ok=True)
    arguments.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
