"""A realistic, seeded memory store: the records coding agents save, for tests and benchmarks.

Records are composed from templates and word lists around a small invented company: its
subsystems (each with an owning team, a datastore, an upstream service), its tools, vendors,
incidents and the people who work there. Subsystems are drawn with a skewed weight, so a big
store holds many records about the same few services and tools, the overlapping knowledge a
summary is expected to merge.

This module composes the records; what they are composed from is beside it: the company in
bench/corpus_company.py, the word lists and field draws in bench/corpus_vocabulary.py, and the
templates in bench/corpus_templates.py (project, reference) and bench/corpus_templates_user.py
(feedback, user).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from bench.corpus_company import Subsystem, invented_company
from bench.corpus_templates import CODEBASE_TEMPLATES
from bench.corpus_templates_user import USER_TEMPLATES
from bench.corpus_vocabulary import DRAWS
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    Record,
    RecordContent,
    RecordType,
)

CORPUS_ACTOR = Actor(kind=ActorKind.SYSTEM, detail="corpus")
"""Who fill_store says wrote every record."""

CORPUS_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""The time of the first record; each later one is a minute after the one before."""

TYPE_SHARES: Mapping[RecordType, float] = {
    RecordType.PROJECT: 0.45,
    RecordType.FEEDBACK: 0.25,
    RecordType.REFERENCE: 0.20,
    RecordType.USER: 0.10,
}
"""The share of each record type in a generated store."""

_TEMPLATES = CODEBASE_TEMPLATES + USER_TEMPLATES
_TEMPLATES_BY_TYPE = {
    record_type: [template for template in _TEMPLATES if template.type is record_type]
    for record_type in RecordType
}


class _Slots(dict[str, object]):
    """Template fields drawn on first use, so one record says the same thing everywhere."""

    def __init__(self, rng: random.Random, subsystem: Subsystem) -> None:
        super().__init__(sub=subsystem)
        self._rng = rng

    def __missing__(self, key: str) -> object:
        value = self[key] = DRAWS[key](self._rng)
        return value


def realistic_records(count: int, seed: int = 0) -> list[RecordContent]:
    """Count believable memory records with unique names, the same for the same seed."""
    rng = random.Random(seed)
    company = invented_company(rng)
    # Zipf-like weights: a handful of services collect most of the knowledge, as in real repos.
    subsystem_weights = [1 / rank for rank in range(1, len(company) + 1)]
    names = _NameBook()
    records = []
    for record_type in _type_sequence(count, rng):
        template = rng.choice(_TEMPLATES_BY_TYPE[record_type])
        slots = _Slots(rng, rng.choices(company, weights=subsystem_weights)[0])
        records.append(
            RecordContent(
                name=names.claim(template.name.format_map(slots)),
                type=record_type,
                description=template.description.format_map(slots),
                body=template.body.format_map(slots),
            )
        )
    return records


async def fill_store(storage: Storage, count: int, seed: int = 0) -> list[Record]:
    """Save realistic_records(count, seed) into storage, a minute apart, as the corpus actor."""
    return [
        await storage.save_record(
            content, actor=CORPUS_ACTOR, at=CORPUS_START + timedelta(minutes=index)
        )
        for index, content in enumerate(realistic_records(count, seed))
    ]


def _type_sequence(count: int, rng: random.Random) -> list[RecordType]:
    """Count types in the designed shares, exact up to rounding at every size, then shuffled."""
    assigned = dict.fromkeys(TYPE_SHARES, 0)
    sequence = []
    for position in range(1, count + 1):
        # The type furthest behind its share goes next, so small stores still hold every type.
        behind = max(TYPE_SHARES, key=lambda kind: TYPE_SHARES[kind] * position - assigned[kind])
        assigned[behind] += 1
        sequence.append(behind)
    rng.shuffle(sequence)
    return sequence


class _NameBook:
    """Hands out unique names: a repeated stem gets the next free numeric suffix."""

    def __init__(self) -> None:
        self._taken: set[str] = set()
        self._last_suffix: dict[str, int] = {}

    def claim(self, stem: str) -> str:
        """Stem itself the first time, then stem-2, stem-3, ... (skipping any already taken)."""
        name, suffix = stem, self._last_suffix.get(stem, 1)
        while name in self._taken:
            suffix += 1
            name = f"{stem}-{suffix}"
        self._taken.add(name)
        self._last_suffix[stem] = suffix
        return name
