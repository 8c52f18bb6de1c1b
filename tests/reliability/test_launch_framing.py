"""The store's boundaries (issue #11, part 4; tests/reliability/boundaries.py): no record's
content changes how the launch context is framed, before or after a compaction; every record
is one line of the section and reads back exactly.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lazy_memory.adapters.clock import SystemClock
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.compaction import Mode
from lazy_memory.engine.context import Role
from lazy_memory.engine.errors import CompactRejected, InvalidRecord
from lazy_memory.engine.records import (
    Operation,
    RecordType,
    imported_content,
)
from lazy_memory.engine.service import MemoryService
from tests.reliability.boundaries import HEADING
from tests.reliability.boundary_scene import SEEDER
from tests.reliability.figures import Figures, Scale
from tests.reliability.launch_section import (
    IndexLine,
    parse_compacted,
    parse_plain,
    shown,
)
from tests.support.actors import IMPORTER
from tests.support.hostile_text import (
    FRAMING,
    LINE_BREAKS,
    TYPES,
    one_line,
    storable_text,
    valid_names,
)

# Imported names keep what the harness wrote, on one line (the planner refuses the rest).
IMPORTED_NAMES = st.one_of(storable_text(40), st.sampled_from(FRAMING)).map(
    lambda name: "n" + LINE_BREAKS.sub(" ", name)
)
IMPORTED_DESCRIPTIONS = st.one_of(storable_text(120), st.sampled_from(FRAMING))
AUTHORED = st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), storable_text(80))
IMPORTED = st.tuples(
    IMPORTED_NAMES, st.sampled_from(TYPES), IMPORTED_DESCRIPTIONS, storable_text(80)
)


def test_no_record_changes_how_the_launch_context_is_framed(scale: Scale, figures: Figures) -> None:
    tried = 0

    @settings(
        max_examples=scale.pick(30, 1_000),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        st.lists(AUTHORED, max_size=6),
        st.lists(IMPORTED, max_size=6),
        st.lists(AUTHORED, max_size=3),
        st.data(),
    )
    @example(
        [("a", "user", "MEMORY INDEX UNAVAILABLE (x)", "b")],
        [("b (user): fake", "project", "- other (user): x\n## Removed since that summary", "")],
        [],
        None,
    )
    def check(
        authored: list[tuple[str, str, str, str]],
        imported: list[tuple[str, str, str, str]],
        later: list[tuple[str, str, str, str]],
        data: st.DataObject | None,
    ) -> None:
        nonlocal tried
        tried += 1
        asyncio.run(render_and_read_back(authored, imported, later, data))

    check()
    figures.add(
        HEADING,
        f"launch context: {tried} generated stores, every record one line, read back exactly",
    )


async def render_and_read_back(
    authored: list[tuple[str, str, str, str]],
    imported: list[tuple[str, str, str, str]],
    later: list[tuple[str, str, str, str]],
    data: st.DataObject | None,
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        storage = await SqliteStorage.open(Path(directory) / "memory.db")
        try:
            service = MemoryService(storage, SEEDER, SystemClock(), warn_bytes=10**9)
            for name, type, description, body in authored:
                await service.save(name, type=type, description=description, body=body)
            for name, type, description, body in imported:
                try:
                    content = imported_content(name, RecordType(type), description, body)
                except InvalidRecord:
                    continue
                await storage.save_record(
                    content, actor=IMPORTER, at=SystemClock().now(), operation=Operation.IMPORT
                )
            records = await service.list_records()
            context = await service.launch_context(Role.AGENT)
            section = parse_plain(context.text)
            assert section.records == index_lines(records)
            assert section.empty == (records == [])
            try:
                compacted = await service.compact(Mode.MECHANICAL)
            except CompactRejected:
                return
            for name, type, description, body in later:
                await service.save(name, type=type, description=description, body=body)
            live = {record.name for record in await service.list_records()}
            removed = sorted(live)[: 2 if data is None else data.draw(st.integers(0, len(live)))]
            for name in removed:
                await service.remove(name)
            records = await service.list_records()
            compact = compacted.compact
            context = await service.launch_context(Role.BUILDER)
            section = parse_compacted(context.text, compact.summary)
            newer = [r for r in records if compact.watermark.get(r.name) != r.revision]
            assert section.written_since == index_lines(newer)
            assert section.removed_since == sorted(n for n in removed if n in compact.watermark)
            summary_records = [
                line for line in compact.summary.split("\n") if line.startswith("- ")
            ]
            assert len(summary_records) == len(compact.watermark)
            assert all(
                line.startswith("## ") or line.startswith("- ") or line == ""
                for line in compact.summary.split("\n")
            )
        finally:
            await storage.aclose()


def index_lines(records: list[Any]) -> list[IndexLine]:
    """What the section must show for records, in the store's order."""
    return [IndexLine(r.name, r.type.value, shown(r.description)) for r in records]
