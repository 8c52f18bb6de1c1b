"""Clock skew (issue #11, part 5): what is newer than a compact is decided by revisions.

A compact's watermark is the (name, revision) pairs it covered, never a time. So a write
stamped earlier than the compact (a clock that ran backwards, a machine whose clock is behind)
still reads as newer, and a record removed then saved again comes back as a newer record,
neither listed as removed nor swallowed by the summary. Checked on sqlite, files and postgres
with a clock the test sets, and as a property over generated histories with a clock that jumps
both ways.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import Role
from lazy_memory.engine.errors import CompactRejected
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import Operation, Record
from lazy_memory.engine.service import MemoryService
from tests.reliability.figures import Figures, Scale
from tests.reliability.launch_section import IndexLine, parse_compacted, parse_plain, shown
from tests.support.actors import BUILDER_SESSION
from tests.support.clocks import NOON, FixedClock
from tests.support.stores import BACKENDS, open_store

HEADING = "clock skew"
NAMES = [f"note-{number}" for number in range(8)]


def description(name: str, version: int = 0) -> str:
    """A description long enough that a mechanical compact of a few records shrinks them."""
    return f"What {name} says, version {version}, written out at some length for the index"


def index_lines(records: list[Record]) -> list[IndexLine]:
    """The lines a section shows for records."""
    return [IndexLine(r.name, r.type.value, shown(r.description)) for r in records]


@pytest.fixture(params=BACKENDS)
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """An empty store of each backend."""
    store = await open_store(request.param, tmp_path, request)
    yield store
    await store.aclose()


async def filled(storage: Storage, clock: FixedClock) -> tuple[MemoryService, Compact]:
    """A service over storage with eight records saved at noon and compacted at noon."""
    service = MemoryService(storage, BUILDER_SESSION, clock, warn_bytes=10**9)
    for name in NAMES:
        await service.save(name, type="project", description=description(name), body="b")
    outcome = await service.compact(Mode.MECHANICAL)
    assert outcome.compact.generated_at == NOON
    return service, outcome.compact


async def test_writes_stamped_before_the_compact_still_read_as_newer(
    storage: Storage, figures: Figures
) -> None:
    clock = FixedClock(NOON)
    service, compact = await filled(storage, clock)

    clock.moment = NOON - timedelta(days=400)  # the clock runs backwards
    updated = await service.save("note-0", description=description("note-0", 1))
    created = await service.save("fresh", type="user", description="Saved a year earlier", body="")
    await service.remove("note-1")
    clock.moment = NOON  # exactly the compact's time: still not covered
    same_time = await service.save("note-2", description=description("note-2", 1))

    for record in (updated, created):
        assert record.updated_at < compact.generated_at
    assert same_time.updated_at == compact.generated_at
    context = await service.launch_context(Role.AGENT)
    section = parse_compacted(context.text, compact.summary)
    assert section.written_since == index_lines([created, updated, same_time])
    assert section.removed_since == ["note-1"]
    status = await service.compact_status()
    assert [r.name for r in status.written_since] == ["fresh", "note-0", "note-2"]
    assert status.removed_since == ["note-1"]
    diagnosis = await service.doctor()
    assert diagnosis.written_since_compact == ["fresh", "note-0", "note-2"]
    assert diagnosis.removed_since_compact == ["note-1"]
    history = await service.history("note-0")
    assert [entry.revision for entry in history] == [1, 2], "history keeps write order"
    backend = type(storage).__name__
    figures.add(HEADING, f"{backend}: writes stamped 400 days before the compact read as newer")


async def test_a_record_removed_then_saved_again_reads_as_new(storage: Storage) -> None:
    clock = FixedClock(NOON)
    service, compact = await filled(storage, clock)
    before = await service.recall("note-3")

    clock.moment = NOON - timedelta(hours=1)
    await service.remove("note-3")
    removed = await service.launch_context(Role.AGENT)
    revived = await service.save(
        "note-3", type=before.type, description=before.description, body=before.body
    )

    assert parse_compacted(removed.text, compact.summary).removed_since == ["note-3"]
    # Identical content, but a new revision: the compact covered revision 1, this is 3.
    assert (before.revision, revived.revision) == (1, 3)
    section = parse_compacted((await service.launch_context(Role.AGENT)).text, compact.summary)
    assert section.written_since == index_lines([revived])
    assert section.removed_since == []
    entries = await service.history("note-3")
    assert [(e.revision, e.operation) for e in entries] == [
        (1, Operation.SAVE),
        (2, Operation.REMOVE),
        (3, Operation.SAVE),
    ]

    # A new compact covers the revived revision; removing it again lists it as removed.
    clock.moment = NOON - timedelta(hours=2)
    recompacted = (await service.compact(Mode.MECHANICAL)).compact
    assert recompacted.watermark["note-3"] == 3
    await service.remove("note-3")
    section = parse_compacted((await service.launch_context(Role.AGENT)).text, recompacted.summary)
    assert (section.written_since, section.removed_since) == ([], ["note-3"])


# The property: any history, any clock.


@dataclass
class Model:
    """What the store must show: live revisions, and the compact's watermark if any."""

    live: dict[str, Record] = field(default_factory=dict)
    watermark: dict[str, int] | None = None
    compact: Compact | None = None


Step = tuple[str, str, int]
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["save", "save", "save", "rm", "compact", "clock"]),
        st.sampled_from(NAMES[:5]),
        st.integers(min_value=-(10**7), max_value=10**7),
    ),
    max_size=25,
)


def test_any_history_with_any_clock_shows_exactly_what_is_newer(
    scale: Scale, figures: Figures, request: pytest.FixtureRequest
) -> None:
    tried = steps = 0
    # PostgreSQL's server takes a while to start: the full run only.
    backends = [*BACKENDS] if scale.full else ["sqlite", "files"]

    @settings(
        max_examples=scale.pick(40, 1_000),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.sampled_from(backends), STEPS)
    def check(backend: str, history: list[Step]) -> None:
        nonlocal tried, steps
        tried += 1
        steps += len(history)
        asyncio.run(replay(backend, history, request))

    check()
    figures.add(
        HEADING,
        f"{tried} generated histories on {', '.join(backends)} ({steps} saves, removals, "
        "compacts and clock jumps), every section exactly the model's",
    )


async def replay(backend: str, history: list[Step], request: pytest.FixtureRequest) -> None:
    """Run history against a fresh store, checking the section after every step."""
    with tempfile.TemporaryDirectory() as directory:
        storage = await open_store(backend, Path(directory), request)
        try:
            clock = FixedClock(NOON)
            service = MemoryService(storage, BUILDER_SESSION, clock, warn_bytes=10**9)
            model = Model()
            for version, (operation, name, seconds) in enumerate(history):
                await apply(service, model, clock, operation, name, seconds, version)
                await check_section(service, model)
        finally:
            await storage.aclose()


async def apply(
    service: MemoryService,
    model: Model,
    clock: FixedClock,
    operation: str,
    name: str,
    seconds: int,
    version: int,
) -> None:
    if operation == "clock":
        clock.moment += timedelta(seconds=seconds)
    elif operation == "save":
        model.live[name] = await service.save(
            name, type="project", description=description(name, version), body=str(seconds)
        )
    elif operation == "rm" and name in model.live:
        await service.remove(name)
        del model.live[name]
    elif operation == "compact":
        try:
            outcome = await service.compact(Mode.MECHANICAL)
        except CompactRejected:
            return  # nothing written: the previous compact, if any, stays
        model.compact = outcome.compact
        model.watermark = {n: r.revision for n, r in model.live.items()}
        assert outcome.compact.watermark == model.watermark


async def check_section(service: MemoryService, model: Model) -> None:
    records = [model.live[name] for name in sorted(model.live)]
    text = (await service.launch_context(Role.AGENT)).text
    if model.compact is None or model.watermark is None:
        assert parse_plain(text).records == index_lines(records)
        return
    section = parse_compacted(text, model.compact.summary)
    newer = [r for r in records if model.watermark.get(r.name) != r.revision]
    assert section.written_since == index_lines(newer)
    assert section.removed_since == sorted(set(model.watermark) - set(model.live))
