"""The name rule (engine/names.py): the table of legal and illegal names, derived names, and
names a store already holds from before the rule."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.names import (
    NAME_MAX_LENGTH,
    check_name,
    check_writable_name,
    derived_name,
    framing_problem,
    name_key,
    name_problem,
    spelled,
)
from lazy_memory.engine.records import Operation, RecordContent, RecordType
from lazy_memory.engine.service import MemoryService
from tests.support.actors import ALICE, IMPORTER
from tests.support.clocks import FixedClock
from tests.support.name_table import ILLEGAL, LEGAL


@pytest.mark.parametrize("name", LEGAL)
def test_legal_names(name: str) -> None:
    assert name_problem(name) is None
    assert check_name(name) == name


@pytest.mark.parametrize(("name", "problem"), ILLEGAL.items())
def test_illegal_names_are_refused_saying_why(name: str, problem: str) -> None:
    with pytest.raises(InvalidRecord, match="invalid name") as refused:
        check_name(name)
    message = refused.value.message
    assert problem in message
    assert message.isprintable(), "the message shows the name escaped, on one line"
    assert len(message) < 600, "a huge name is cut in the message"


@pytest.mark.parametrize("name", list(ILLEGAL))
def test_a_derived_name_obeys_the_rule_and_depends_on_the_name_alone(name: str) -> None:
    derived = derived_name(name)

    assert name_problem(derived) is None, derived
    assert derived == derived_name(name)
    assert len(derived) <= NAME_MAX_LENGTH


def test_a_derived_name_keeps_what_it_can_and_ends_with_a_hash() -> None:
    assert derived_name("CI/CD\tnotes").startswith("CI-CD notes-")
    assert derived_name("b (user): fake").startswith("b (user) fake-")
    assert derived_name("..hidden").startswith("hidden-")
    assert derived_name("\x1b[31m").startswith("[31m-")
    assert derived_name("\x00\u200b").startswith("unnamed-")
    long = derived_name("x" * 5000)
    assert len(long) == NAME_MAX_LENGTH
    assert long.startswith("x" * 150)
    # Two originals that clean to the same text still get two names.
    assert derived_name("a/b") != derived_name("a\\b")


def test_a_derived_name_reads_look_alike_framing_as_the_plain_characters() -> None:
    assert derived_name("fake\uff08project\uff09: x").startswith("fake(project) x-")
    assert derived_name("b (user)\u2236 fake").startswith("b (user) fake-")
    # A name with no look-alike mark keeps its characters as they are.
    assert derived_name("\uff21\uff0f\uff22\tx").startswith("\uff21\uff0f\uff22 x-")


TYPE_MARK_PIECES = st.sampled_from(
    [
        *("(", ")", ":", " ", "user", "Project", "feedback", "reference", "x", "e\u0301"),
        *("\uff08", "\uff09", "\uff1a", "\ufe59", "\u207e", "\u2236", "\u2768", "\u3015"),
        *("\uff55\uff53\uff45\uff52", "\u1d58\u02e2\u1d49\u02b3", "\u3000", "\u00a0"),
    ]
)
"""Pieces of `(type):` and its look-alikes, for names that come near one."""


@given(st.lists(TYPE_MARK_PIECES | st.text(max_size=3), max_size=12).map("".join))
def test_no_name_whose_nfkc_form_holds_a_type_mark_passes_the_framing_checks(name: str) -> None:
    folded = unicodedata.normalize("NFKC", name)
    if re.search(r"\(\s*(user|feedback|project|reference)\s*\)\s*:", folded, re.IGNORECASE):
        assert framing_problem(name) is not None
        assert name_problem(name) is not None
    # Whatever the name, its derived one obeys the rule (look-alikes included).
    assert name_problem(derived_name(name)) is None


def test_spellings_of_one_name_are_told_apart_in_messages() -> None:
    assert spelled("caf\u00e9") == "'caf\\xe9'"
    assert spelled("cafe\u0301") == "'cafe\\u0301'"
    assert name_key("cafe\u0301") == name_key("caf\u00e9") == "caf\u00e9"


def test_framing_is_what_even_a_held_name_must_keep() -> None:
    for name in ("tab\tname", "esc\x1b[31m", "x" * 5000, "../x", ".hidden", " lead"):
        assert framing_problem(name) is None, name
    assert framing_problem("two\nlines") is not None
    assert framing_problem("a\u2028b") is not None
    assert framing_problem("b (user): fake") is not None
    assert framing_problem("b \uff08user\uff09\uff1a fake") is not None
    assert framing_problem("   ") is not None
    assert framing_problem("lone\ud800") is not None


HUMAN = Identity(actor=ALICE, task_id=None)
AT = datetime(2026, 1, 2, tzinfo=UTC)


async def old_import(storage: SqliteStorage, name: str) -> None:
    """Store name as an older importer did, past today's rule (straight into the storage)."""
    content = RecordContent(name=name, type=RecordType.PROJECT, description="old", body="b")
    await storage.save_record(content, actor=IMPORTER, at=AT, operation=Operation.IMPORT)


@pytest.fixture
async def storage(tmp_path: Path) -> SqliteStorage:
    return await SqliteStorage.open(tmp_path / "memory.db")


@pytest.mark.parametrize("name", ["tab\tname", "old/path name", "x" * 300, ".hidden", "e\x1bsc"])
async def test_a_name_held_from_before_the_rule_stays_writable_by_its_exact_name(
    storage: SqliteStorage, name: str
) -> None:
    await old_import(storage, name)
    service = MemoryService(storage, HUMAN, FixedClock(AT))

    assert await check_writable_name(name, storage) is True
    updated = await service.save(name, description="edited")
    removed = await service.remove(name)
    revived = await service.save(name, type="user", description="back", body="again")

    assert (updated.name, updated.revision, updated.description) == (name, 2, "edited")
    assert removed.revision == 3
    assert (revived.name, revived.revision) == (name, 4)
    assert [entry.revision for entry in await service.history(name)] == [1, 2, 3, 4]
    await storage.aclose()


async def test_a_name_never_held_is_refused_and_nothing_is_read_for_a_legal_one(
    storage: SqliteStorage,
) -> None:
    await old_import(storage, "held\tname")
    service = MemoryService(storage, HUMAN, FixedClock(AT))

    with pytest.raises(InvalidRecord, match="U\\+0009"):
        await service.save("other\tname", type="user", description="d", body="b")
    assert await check_writable_name("Release checklist", _NoStorage()) is False  # type: ignore[arg-type]
    assert [entry.name for entry in await service.history()] == ["held\tname"]
    await storage.aclose()


async def test_a_held_name_that_would_break_framing_is_not_saved_again(
    storage: SqliteStorage,
) -> None:
    await old_import(storage, "two\nlines")
    service = MemoryService(storage, HUMAN, FixedClock(AT))

    with pytest.raises(InvalidRecord, match="more than one line"):
        await service.save("two\nlines", description="edited")
    # Still reachable by its exact name, to read and to remove.
    assert (await service.recall("two\nlines")).description == "old"
    assert (await service.remove("two\nlines")).revision == 2
    await storage.aclose()


class _NoStorage:
    """A storage that fails the test if it is read at all."""

    async def history(self, name: str | None = None) -> list[object]:
        raise AssertionError(f"history({name!r}) was read for a name that obeys the rule")
