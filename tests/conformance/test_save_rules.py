"""A save's rules above the backend (#18 points 5-7), held on every backend by MemoryService.

A save equal to the live revision writes nothing and says `unchanged`; reviving a removed
name keeps what the save leaves out from its last live revision; an if_revision a removed
record cannot match says it is removed and how to revive it; and an imported record with a
long description is shortened, removed and revived by its exact name.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazy_memory.engine.errors import Conflict, InvalidRecord, NotFound
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Operation,
    Provenance,
    RecordContent,
    RecordType,
)
from lazy_memory.engine.service import MemoryService
from tests.support.actors import ALICE, IMPORTER
from tests.support.clocks import T0, TickingClock
from tests.support.name_table import REAL_WORLD

LONG = "An imported description far over the authoring limit, kept verbatim by the import. " * 3


@pytest.fixture
def service(storage: Storage) -> MemoryService:
    return MemoryService(storage, Identity(actor=ALICE), TickingClock(T0))


async def test_a_save_equal_to_the_live_revision_writes_nothing_and_says_so(
    service: MemoryService, storage: Storage
) -> None:
    first = await service.save("deploy", type="project", description="How we deploy", body="make")
    marker = await storage.change_marker()

    whole = await service.save("deploy", type="project", description="How we deploy", body="make")
    partial = await service.save("deploy", description="How we deploy")
    bodyless = await service.save("deploy", type="project")
    checked = await service.save(
        "deploy", type="project", description="How we deploy", body="make", if_revision=1
    )

    for answer in (whole, partial, bodyless, checked):
        assert (answer.unchanged, answer.revision, answer.updated_at) == (
            True,
            1,
            first.updated_at,
        )
        assert answer.model_dump(mode="json")["unchanged"] is True
    assert first.unchanged is False
    assert "unchanged" not in first.model_dump(mode="json")
    assert await storage.change_marker() == marker
    assert [entry.revision for entry in await storage.history("deploy")] == [1]
    # The next writer's compare-and-swap on the revision it read still holds.
    edited = await service.save("deploy", description="How we ship", if_revision=1)
    assert (edited.unchanged, edited.revision) == (False, 2)


async def test_any_difference_is_a_write(service: MemoryService) -> None:
    await service.save("deploy", type="project", description="How we deploy", body="make")

    retyped = await service.save("deploy", type="reference")
    redescribed = await service.save("deploy", description="How we deploy ")
    rebodied = await service.save("deploy", body="make\n")

    assert [answer.revision for answer in (retyped, redescribed, rebodied)] == [2, 3, 4]
    assert not any(answer.unchanged for answer in (retyped, redescribed, rebodied))


async def test_an_unchanged_save_with_a_stale_if_revision_is_still_a_conflict(
    service: MemoryService,
) -> None:
    await service.save("deploy", type="project", description="How we deploy", body="make")
    await service.save("deploy", body="make deploy")

    with pytest.raises(Conflict, match="at revision 2"):
        await service.save("deploy", body="make deploy", if_revision=1)


async def test_a_revival_keeps_the_type_and_description_of_the_last_live_revision(
    service: MemoryService, storage: Storage
) -> None:
    await service.save("style", type="feedback", description="Small modules", body="first")
    await service.save("style", body="second")
    await service.remove("style")

    revived = await service.save("style", body="third")
    await service.remove("style")
    kept_whole = await service.save("style")

    assert (revived.revision, revived.unchanged) == (4, False)
    assert (revived.type, revived.description, revived.body) == (
        RecordType.FEEDBACK,
        "Small modules",
        "third",
    )
    assert (kept_whole.revision, kept_whole.body, kept_whole.description) == (
        6,
        "third",
        "Small modules",
    )
    assert (await storage.recall_record("style")).revision == 6


async def test_saving_a_removed_records_last_content_revives_it(
    service: MemoryService, storage: Storage
) -> None:
    await service.save("deploy", type="project", description="How we deploy", body="make")
    await service.remove("deploy")

    revived = await service.save("deploy", type="project", description="How we deploy", body="make")

    assert (revived.revision, revived.unchanged) == (3, False)
    assert (await storage.recall_record("deploy")).revision == 3


async def test_an_if_revision_a_removed_record_cannot_match_says_how_to_revive_it(
    service: MemoryService,
) -> None:
    await service.save("deploy", type="project", description="How we deploy", body="make")
    await service.remove("deploy")

    for stale in (0, 1, 7):
        with pytest.raises(Conflict) as refused:
            await service.save("deploy", body="make", if_revision=stale)
        assert refused.value.message == (
            f"'deploy' is removed (revision 2 removed it), so if_revision {stale} cannot match: "
            "to revive it, save with if_revision 2 (--if-revision 2) or without one"
        )
    revived = await service.save("deploy", body="make it", if_revision=2)
    assert (revived.revision, revived.description) == (3, "How we deploy")


async def test_an_if_revision_a_name_never_written_cannot_match_is_refused_unwritten(
    service: MemoryService,
) -> None:
    for stale, body in ((1, "b"), (7, None)):  # the whole record, and a save that merges
        with pytest.raises(Conflict) as refused:
            await service.save("new", type="user", description="d", body=body, if_revision=stale)
        assert refused.value.message == (
            f"'new' has never been written (revision 0), so if_revision {stale} cannot match: "
            "save with if_revision 0 (--if-revision 0) to create it only while it is new, or "
            "without one"
        )
    assert await service.history() == []

    created = await service.save("new", type="user", description="d", if_revision=0)
    assert created.revision == 1


async def test_a_read_or_removal_of_a_removed_record_names_the_revision_and_the_revival(
    service: MemoryService,
) -> None:
    await service.save("café", type="project", description="How we deploy", body="make")
    await service.remove("café")
    await service.save("café", body="make it")
    await service.remove("café")
    decomposed = "cafe\u0301"

    for attempt in (service.recall, service.remove):
        for spelling in ("café", decomposed):
            with pytest.raises(NotFound) as missing:
                await attempt(spelling)
            assert missing.value.message == (
                f"no live record named {spelling!r}: it was removed at revision 4; a save of "
                "that name revives it, keeping what the save leaves out from before the removal"
            )
            assert missing.value.data == {"removed_revision": 4}
    assert len(await service.history("café")) == 4, "the refused removals wrote nothing"


async def test_a_name_never_written_is_only_not_found(service: MemoryService) -> None:
    await service.save("other", type="user", description="d")
    await service.remove("other")

    for attempt in (service.recall, service.remove):
        with pytest.raises(NotFound) as missing:
            await attempt("never")
        assert missing.value.message.endswith("record named 'never'")  # no word of removal
        assert missing.value.data == {}


async def test_imported_long_descriptions_are_shortened_removed_and_revived_by_exact_name(
    service: MemoryService, storage: Storage
) -> None:
    at = iter(T0 - timedelta(days=1, seconds=-second) for second in range(100))
    for number, name in enumerate(REAL_WORLD):
        origin = Provenance(source=f"/memory/memory_{number}.md", original_type="Gotcha")
        imported = RecordContent(
            name=name, type=RecordType.PROJECT, description=LONG, body="Body", provenance=origin
        )
        await storage.save_record(
            imported, actor=IMPORTER, at=next(at), operation=Operation.IMPORT, if_revision=0
        )

    for number, name in enumerate(REAL_WORLD):
        shortened = await service.save(name, description="Shortened by a person")
        again = await service.save(name, description="Shortened by a person")
        await service.remove(name)
        revived = await service.save(name, body="Back")

        assert (shortened.revision, again.unchanged, revived.revision) == (2, True, 4)
        assert (revived.name, revived.description, revived.type) == (
            name,
            "Shortened by a person",
            RecordType.PROJECT,
        )
        assert revived.provenance is not None
        assert revived.provenance.source == f"/memory/memory_{number}.md"
        entries = await storage.history(name)
        assert [(entry.revision, entry.operation) for entry in entries] == [
            (1, Operation.IMPORT),
            (2, Operation.SAVE),
            (3, Operation.REMOVE),
            (4, Operation.SAVE),
        ]


async def test_an_imported_description_carried_over_never_stops_a_new_body_or_type(
    service: MemoryService, storage: Storage
) -> None:
    # Longer than 200 characters and on two lines: an import keeps both (#30 point 4).
    kept = LONG + "\n  continued on a second line"
    imported = RecordContent(
        name="imported", type=RecordType.PROJECT, description=kept, body="x" * 70_000
    )
    await storage.save_record(imported, actor=IMPORTER, at=T0, operation=Operation.IMPORT)

    new_body = await service.save("imported", body="A new body")
    new_type = await service.save("imported", type="reference")
    # As an MCP save sends it: every field, the description as the record holds it.
    resent = await service.save("imported", type="user", description=kept, body="Again")
    await service.remove("imported")
    revived = await service.save("imported", type="feedback", description=kept, body="Back")

    assert (new_body.revision, new_type.revision, resent.revision) == (2, 3, 4)
    assert (revived.revision, revived.description) == (6, kept)
    with pytest.raises(InvalidRecord, match="is 256 characters; the limit is 200"):
        await service.save("imported", description=LONG + "changed")
    with pytest.raises(InvalidRecord, match="must be one line"):
        await service.save("imported", description="changed\non two lines")


async def test_an_imported_body_carried_over_never_stops_a_new_description(
    service: MemoryService, storage: Storage
) -> None:
    imported = RecordContent(name="big", type=RecordType.USER, description="d", body="x" * 70_000)
    await storage.save_record(imported, actor=IMPORTER, at=T0, operation=Operation.IMPORT)

    resent = await service.save("big", type="user", description="shorter", body="x" * 70_000)

    assert (resent.revision, resent.description) == (2, "shorter")
    with pytest.raises(InvalidRecord, match="the limit is 65,536 bytes"):
        await service.save("big", body="y" * 70_000)
