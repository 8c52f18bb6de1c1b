"""The import planner: which harness memory files become records (docs/architecture.md, Import).

The reader (an adapter) finds and parses the files; this module decides: one record per
name (the newest file wins), names the store already has are left alone (so a re-run is a
no-op and never clobbers a later human edit), content is kept verbatim, and a type outside
the four becomes `project` with the original kept in the record's provenance. A name that
breaks the name rule (engine/names.py) gets its derived name, reported, with the original
kept in the provenance too: no file is dropped for its name.

import_memory previews that plan, or applies it by writing system records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from lazy_memory.engine.constants import MAX_BODY_BYTES
from lazy_memory.engine.errors import Conflict, InvalidRecord
from lazy_memory.engine.names import derived_name, name_key, name_problem
from lazy_memory.engine.ports import read_partly
from lazy_memory.engine.records import (
    DESCRIPTION_MAX_LENGTH,
    Actor,
    ActorKind,
    Operation,
    Provenance,
    RecordContent,
    RecordType,
    imported_content,
)

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Clock, Storage

ProgressCallback = Callable[[int, int], None]
"""Told (done, total) as a long operation advances."""

IMPORT_ACTOR = Actor(kind=ActorKind.SYSTEM, detail="harness-import")


class HarnessMemory(BaseModel):
    """One memory file as the reader found it: its fields verbatim, and where it lives."""

    model_config = ConfigDict(frozen=True)

    path: str
    mtime: float
    name: str
    description: str
    type: str | None = None
    body: str
    session_id: str | None = None
    modified: str | None = None


class SkippedFile(BaseModel):
    """A file that gives no record, and why; or a file read with a caveat worth reporting."""

    model_config = ConfigDict(frozen=True)

    path: str
    reason: str


class HarnessScan(BaseModel):
    """Everything the reader found: memories, files it skipped, and the folders it scanned."""

    memories: list[HarnessMemory] = []
    skipped: list[SkippedFile] = []
    notes: list[SkippedFile] = []
    directories: list[str] = []


class HarnessReader(Protocol):
    """Finds the harness's memory files for this project and parses them."""

    async def scan(self) -> HarnessScan:
        """Every memory file under the directories this project's harness memory lives in."""
        ...


class RenamedFile(BaseModel):
    """A file whose name breaks the name rule, and the derived name its record gets."""

    model_config = ConfigDict(frozen=True)

    path: str
    original: str
    name: str
    reason: str


class PlannedRecord(BaseModel):
    """A record the import will write, and the file it comes from."""

    content: RecordContent
    source: str


class ImportPlan(BaseModel):
    """What an import would do (or did): records to write and everything left aside."""

    records: list[PlannedRecord] = []
    already_present: list[str] = []
    superseded: list[SkippedFile] = []
    skipped: list[SkippedFile] = []
    notes: list[SkippedFile] = []
    retyped: list[str] = []
    renamed: list[RenamedFile] = []
    long_descriptions: list[str] = []
    directories: list[str] = []


class ImportResult(BaseModel):
    """An import's plan, and the names it wrote (none for a preview)."""

    plan: ImportPlan
    applied: bool
    imported: list[str] = []
    max_body_bytes: int = MAX_BODY_BYTES
    large_bodies: list[str] = []
    """Records whose body is over max_body_bytes: imported verbatim all the same."""


async def import_plan(harness: HarnessReader | None, storage: Storage) -> ImportPlan:
    """What importing the harness's memory files into storage would do; none without a reader."""
    if harness is None:
        return ImportPlan()
    scan = await harness.scan()
    # A history row the store cannot read still names a name it holds.
    entries, unreadable = await read_partly(storage.history())
    ever_written = {entry.name for entry in entries} | {record.name for record in unreadable}
    return plan_import(scan, ever_written)


async def import_memory(
    harness: HarnessReader | None,
    storage: Storage,
    clock: Clock,
    *,
    max_body_bytes: int,
    apply: bool,
    progress: ProgressCallback | None = None,
) -> ImportResult:
    """Preview, or apply, the import of the harness's memory files as system records.

    A name the store has ever held (a removed one included) is left alone, and each write is
    a create-only compare-and-swap, so a re-run or a concurrent save never clobbers what a
    person wrote.
    """
    plan = await import_plan(harness, storage)
    limit = max_body_bytes
    # Imports keep bodies verbatim whatever their size. Those over the authoring limit are
    # reported: a later save that rewrites such a body must bring it under the limit.
    large = [p.content.name for p in plan.records if len(p.content.body.encode()) > limit]
    result = ImportResult(plan=plan, applied=False, max_body_bytes=limit, large_bodies=large)
    if not apply:
        return result
    imported = []
    for done, planned in enumerate(plan.records, start=1):
        try:
            await storage.save_record(
                planned.content,
                actor=IMPORT_ACTOR,
                at=clock.now(),
                operation=Operation.IMPORT,
                if_revision=0,
            )
        except Conflict:
            plan.already_present.append(planned.content.name)
        else:
            imported.append(planned.content.name)
        if progress is not None:
            progress(done, len(plan.records))
    return result.model_copy(update={"applied": True, "imported": imported})


def plan_import(scan: HarnessScan, existing: Iterable[str]) -> ImportPlan:
    """Decide what to import from scan into a store that already has the names in existing.

    Names are compared as the store compares them (engine/names.py, name_key): two files
    whose names differ only in Unicode form are one record, and a file naming a held record
    in another form is that record, already present.
    """
    known = {name_key(name): name for name in existing}
    newest: dict[str, HarnessMemory] = {}
    superseded: list[SkippedFile] = []
    for memory in sorted(scan.memories, key=lambda m: (m.mtime, m.path), reverse=True):
        key = name_key(_safe_name(memory.name))
        if key in newest:
            winner = newest[key].path
            superseded.append(SkippedFile(path=memory.path, reason=f"a newer copy: {winner}"))
        else:
            newest[key] = memory
    plan = ImportPlan(
        superseded=superseded,
        skipped=list(scan.skipped),
        notes=list(scan.notes),
        directories=list(scan.directories),
    )
    for key in sorted(newest):
        memory = newest[key]
        name = _safe_name(memory.name)
        # An older import may have stored the original name as it was: that is the same record.
        held = known.get(key) or known.get(name_key(memory.name))
        if held is not None:
            plan.already_present.append(held)
            continue
        record_type, original = _record_type(memory.type)
        renamed = name != memory.name
        provenance = Provenance(
            source=memory.path,
            session_id=memory.session_id,
            modified=memory.modified,
            original_type=original,
            original_name=memory.name if renamed else None,
        )
        try:
            content = imported_content(
                name, record_type, memory.description, memory.body, provenance
            )
        except InvalidRecord as error:
            plan.skipped.append(SkippedFile(path=memory.path, reason=error.message))
            continue
        plan.records.append(PlannedRecord(content=content, source=memory.path))
        if renamed:
            reason = name_problem(memory.name) or "it breaks the name rule"
            plan.renamed.append(
                RenamedFile(path=memory.path, original=memory.name, name=name, reason=reason)
            )
        if original is not None:
            plan.retyped.append(name)
        if len(memory.description) > DESCRIPTION_MAX_LENGTH:
            plan.long_descriptions.append(name)
    return plan


def _safe_name(name: str) -> str:
    """The name a record from a file called name gets: name itself if it obeys the rule."""
    return name if name_problem(name) is None else derived_name(name)


def _record_type(found: str | None) -> tuple[RecordType, str | None]:
    """The record type for a file's type field, and the original when it is not one of four."""
    if found is None:
        return RecordType.PROJECT, None
    try:
        return RecordType(found.strip().lower()), None
    except ValueError:
        return RecordType.PROJECT, found
