"""The storage conformance suite: every backend must pass every test here."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.errors import Conflict, NotFound
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Operation,
    Provenance,
    RecordType,
)
from tests.support.actors import ALICE, BUILDER, IMPORTER
from tests.support.clocks import T0
from tests.support.records import content
from tests.support.stores import OpenStorage


async def test_create_then_recall_and_list(storage: Storage) -> None:
    saved = await storage.save_record(content(), actor=ALICE, at=T0)

    assert saved.revision == 1
    assert saved.updated_by == ALICE
    assert saved.updated_at == T0
    assert await storage.recall_record("deploy-steps") == saved
    assert await storage.list_records() == [saved]


async def test_update_replaces_content_as_next_revision(storage: Storage) -> None:
    await storage.save_record(content(), actor=ALICE, at=T0)
    updated = await storage.save_record(
        content(body="Run make release.", type=RecordType.REFERENCE), actor=BUILDER, at=T0
    )

    assert updated.revision == 2
    fetched = await storage.recall_record("deploy-steps")
    assert (fetched.body, fetched.type, fetched.updated_by) == (
        "Run make release.",
        RecordType.REFERENCE,
        BUILDER,
    )
    assert [record.name for record in await storage.list_records()] == ["deploy-steps"]


async def test_list_holds_live_records_in_name_order(storage: Storage) -> None:
    for name in ("zeta", "alpha", "mid"):
        await storage.save_record(content(name=name), actor=ALICE, at=T0)
    await storage.remove_record("mid", actor=ALICE, at=T0)

    assert [record.name for record in await storage.list_records()] == ["alpha", "zeta"]


async def test_tombstone_hides_record_and_revival_takes_a_higher_revision(
    storage: Storage,
) -> None:
    await storage.save_record(content(), actor=ALICE, at=T0)
    await storage.save_record(content(body="v2"), actor=ALICE, at=T0)
    tombstone = await storage.remove_record("deploy-steps", actor=BUILDER, at=T0)

    assert (tombstone.revision, tombstone.operation) == (3, Operation.REMOVE)
    assert tombstone.body == "v2"
    assert await storage.list_records() == []
    with pytest.raises(NotFound):
        await storage.recall_record("deploy-steps")

    revived = await storage.save_record(content(body="v4"), actor=ALICE, at=T0)

    assert revived.revision == 4
    assert (await storage.recall_record("deploy-steps")).body == "v4"
    assert [entry.operation for entry in await storage.history("deploy-steps")] == [
        Operation.SAVE,
        Operation.SAVE,
        Operation.REMOVE,
        Operation.SAVE,
    ]


async def test_removing_what_is_not_live_is_not_found(storage: Storage) -> None:
    with pytest.raises(NotFound):
        await storage.remove_record("never-written", actor=ALICE, at=T0)
    await storage.save_record(content(), actor=ALICE, at=T0)
    await storage.remove_record("deploy-steps", actor=ALICE, at=T0)
    with pytest.raises(NotFound):
        await storage.remove_record("deploy-steps", actor=ALICE, at=T0)
    assert len(await storage.history()) == 2


async def test_history_keeps_write_order_attribution_and_time(storage: Storage) -> None:
    writes = [
        ("a", ALICE, Operation.SAVE),
        ("b", BUILDER, Operation.SAVE),
        ("a", BUILDER, Operation.SAVE),
        ("c", IMPORTER, Operation.IMPORT),
    ]
    for step, (name, actor, operation) in enumerate(writes):
        await storage.save_record(
            content(name=name, body=f"step {step}"),
            actor=actor,
            at=T0 + timedelta(seconds=step),
            operation=operation,
        )
    await storage.remove_record("b", actor=ALICE, at=T0 + timedelta(seconds=9))

    history = await storage.history()

    assert [(e.name, e.revision, e.actor, e.operation) for e in history] == [
        ("a", 1, ALICE, Operation.SAVE),
        ("b", 1, BUILDER, Operation.SAVE),
        ("a", 2, BUILDER, Operation.SAVE),
        ("c", 1, IMPORTER, Operation.IMPORT),
        ("b", 2, ALICE, Operation.REMOVE),
    ]
    assert [e.at for e in history] == [T0 + timedelta(seconds=s) for s in (0, 1, 2, 3, 9)]
    assert [e.body for e in history[:4]] == ["step 0", "step 1", "step 2", "step 3"]
    assert [e.revision for e in await storage.history("a")] == [1, 2]
    assert await storage.history("never-written") == []


async def test_imported_long_description_is_stored_verbatim(storage: Storage) -> None:
    description = ("Imported  from the harness:\tkept   verbatim. " * 30)[:1000]
    imported = content(name="Harness Note_1", description=description)

    await storage.save_record(imported, actor=IMPORTER, at=T0, operation=Operation.IMPORT)

    record = await storage.recall_record("Harness Note_1")
    assert record.description == description
    assert len(record.description) == 1000
    assert (await storage.history())[0].description == description


async def test_provenance_is_kept_with_the_record_and_its_history(storage: Storage) -> None:
    origin = Provenance(
        source="/home/a/.claude/projects/-repo/memory/x.md",
        session_id="0f3c",
        modified="2026-01-02",
        original_type="opinion",
    )
    imported = content().model_copy(update={"provenance": origin})

    await storage.save_record(imported, actor=IMPORTER, at=T0, operation=Operation.IMPORT)
    await storage.save_record(content(body="edited by a human"), actor=ALICE, at=T0)

    first, second = await storage.history("deploy-steps")
    assert first.provenance == origin
    assert second.provenance is None
    assert (await storage.recall_record("deploy-steps")).provenance is None


@pytest.mark.parametrize(
    "text",
    [
        "'; DROP TABLE records; --",
        'quotes " and \\ backslashes',
        "emoji 🧠 and CJK 記憶 and RTL שלום",
        "control \x00\x01\x1b[31m characters",
        "line\nbreaks\r\nand\ttabs\n",
        "x" * 200_000,
    ],
    ids=["sql", "quotes", "unicode", "control", "line-breaks", "200k"],
)
async def test_any_text_round_trips_byte_identical(storage: Storage, text: str) -> None:
    await storage.save_record(
        content(description=text, body=text), actor=IMPORTER, at=T0, operation=Operation.IMPORT
    )

    record = await storage.recall_record("deploy-steps")
    assert (record.description, record.body) == (text, text)
    assert (await storage.history())[0].body == text


async def test_compare_and_swap(storage: Storage) -> None:
    first = await storage.save_record(content(), actor=ALICE, at=T0, if_revision=0)
    with pytest.raises(Conflict):
        await storage.save_record(content(body="clobber"), actor=ALICE, at=T0, if_revision=0)
    second = await storage.save_record(
        content(body="v2"), actor=ALICE, at=T0, if_revision=first.revision
    )
    with pytest.raises(Conflict):
        await storage.save_record(
            content(body="stale"), actor=BUILDER, at=T0, if_revision=first.revision
        )

    assert second.revision == 2
    assert (await storage.recall_record("deploy-steps")).body == "v2"
    assert len(await storage.history()) == 2


async def test_compare_and_swap_counts_the_tombstone(storage: Storage) -> None:
    await storage.save_record(content(), actor=ALICE, at=T0)
    await storage.remove_record("deploy-steps", actor=ALICE, at=T0)

    with pytest.raises(Conflict):
        await storage.save_record(content(), actor=ALICE, at=T0, if_revision=1)
    revived = await storage.save_record(content(), actor=ALICE, at=T0, if_revision=2)
    assert revived.revision == 3


async def test_live_revisions_and_removed_since_a_watermark(storage: Storage) -> None:
    for name in ("kept", "changed", "removed", "revived"):
        await storage.save_record(content(name=name), actor=ALICE, at=T0)
    watermark = await storage.live_revisions()
    assert watermark == {"kept": 1, "changed": 1, "removed": 1, "revived": 1}

    await storage.save_record(content(name="changed", body="v2"), actor=ALICE, at=T0)
    await storage.remove_record("removed", actor=ALICE, at=T0)
    await storage.remove_record("revived", actor=ALICE, at=T0)
    await storage.save_record(content(name="revived"), actor=ALICE, at=T0)
    await storage.save_record(content(name="new"), actor=ALICE, at=T0)
    await storage.save_record(content(name="new-then-removed"), actor=ALICE, at=T0)
    await storage.remove_record("new-then-removed", actor=ALICE, at=T0)

    assert await storage.live_revisions() == {"kept": 1, "changed": 2, "revived": 3, "new": 1}
    assert await storage.removed_since(watermark) == ["removed"]


async def test_compact_slot_is_overwritten_and_cleared_without_history(storage: Storage) -> None:
    await storage.save_record(content(), actor=ALICE, at=T0)
    assert await storage.get_compact() is None

    first = Compact(
        preamble="Memory summary",
        summary="- deploy-steps: how we deploy",
        generator="mechanical",
        generated_at=T0,
        generated_by=ALICE,
        watermark={"deploy-steps": 1},
    )
    second = first.model_copy(update={"summary": "shorter", "generator": "llm", "model": "m"})
    await storage.put_compact(first)
    assert await storage.get_compact() == first
    await storage.put_compact(second)
    assert await storage.get_compact() == second
    await storage.clear_compact()
    assert await storage.get_compact() is None
    await storage.clear_compact()

    assert len(await storage.history()) == 1
    assert (await storage.recall_record("deploy-steps")).revision == 1


async def test_a_second_handle_sees_every_write(open_store: OpenStorage) -> None:
    first = await open_store()
    await first.save_record(content(), actor=ALICE, at=T0)
    second = await open_store()
    await second.save_record(content(body="from the second"), actor=BUILDER, at=T0)
    await first.remove_record("deploy-steps", actor=ALICE, at=T0)

    assert await second.list_records() == []
    assert [entry.revision for entry in await second.history()] == [1, 2, 3]
    await first.aclose()

    reopened = await open_store()
    assert [entry.actor for entry in await reopened.history()] == [ALICE, BUILDER, ALICE]
