"""What one run measures and how hard it tries: sizes, repeats, budgets, and its fixtures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.stores import Store, build_store


@dataclass(frozen=True)
class Plan:
    """The run's settings; every measurement group reads what it needs from here."""

    sizes: tuple[int, ...]
    backends: tuple[str, ...]
    repeat: int
    """Timed runs of each whole-process measurement (spawns, CLI commands, save batches)."""
    requests: int
    """Timed requests of each warm, per-request measurement."""
    saves: int
    """Saves per batch, per client."""
    budget_seconds: float
    """Cap on one measurement's timed time: slow paths get fewer samples (never below 3)."""
    workdir: Path

    @property
    def stderr(self) -> Path:
        """Where every spawned process's stderr goes."""
        return self.workdir / "stderr.log"


class Fixtures:
    """The run's stores, each built on first use and then reused."""

    def __init__(self, plan: Plan) -> None:
        self._workdir = plan.workdir
        self._built: dict[tuple[str, int], Store] = {}

    async def store(self, backend: str, records: int) -> Store:
        """The corpus store of that backend and size."""
        key = (backend, records)
        if key not in self._built:
            self._built[key] = await build_store(backend, records, self._workdir)
        return self._built[key]
