"""PostgreSQL in a SQL_ASCII database, whose rows may hold text that is not UTF-8 (issue 30).

Such a database keeps whatever bytes it is given: another tool may write a body in Latin-1,
or the UTF-8 form of a lone surrogate. The server refuses to send such text to a UTF-8
client and fails the whole statement, so before adapters/postgres/text.py every search that
met the row failed. Now the backend reads it as a SQL_ASCII client: that record is named as
one the store cannot read, and every other record reads, through the backend and through
the real `lazy` command.
"""

from __future__ import annotations

import itertools
import os

import asyncpg
import pytest

from lazy_memory.adapters.postgres.storage import PostgresStorage
from lazy_memory.engine.errors import UnreadableRecords
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_parser import parse_query
from tests.e2e.conftest import Lazy
from tests.support.actors import ALICE
from tests.support.clocks import T0
from tests.support.postgres import PostgresServer, fresh_project

NAMES = ["alpha", "broken", "zeta"]
READABLE = ["alpha", "zeta"]
NOT_UTF8 = {"latin-1": b"caf\xe9", "lone-surrogate": b"\xed\xa0\x80"}
"""Text another tool may leave: Latin-1, and what encoding a lone surrogate as UTF-8 gives."""
_databases = itertools.count(1)


@pytest.fixture
def dsn(postgres_server: PostgresServer) -> str:
    """A new SQL_ASCII database (its encoding needs template0 and the C locale)."""
    name = f"ascii_{os.getpid()}_{next(_databases)}"
    return postgres_server.create_database(
        name, "--encoding=SQL_ASCII", "--template=template0", "--locale=C"
    )


@pytest.fixture
async def project_key(dsn: str) -> str:
    """A project holding alpha, broken and zeta, each with the word "shared" in its body."""
    project = fresh_project("ascii")
    storage = await PostgresStorage.open(dsn, project)
    try:
        for name in NAMES:
            content = RecordContent(
                name=name, type=RecordType.PROJECT, description=f"{name} note", body="shared words"
            )
            await storage.save_record(content, actor=ALICE, at=T0)
    finally:
        await storage.aclose()
    return project


async def damage(dsn: str, project: str, field: str, text: bytes) -> None:
    """Put text before broken's field, as bytes the database keeps unchecked."""
    escaped = "".join(f"\\x{byte:02x}" for byte in text)
    admin = await asyncpg.connect(dsn)
    try:
        assert await admin.fetchval("SHOW server_encoding") == "SQL_ASCII"
        done = await admin.execute(
            f"UPDATE lazy_records SET {field} = E'{escaped} ' || {field} "
            "WHERE project = $1 AND name = 'broken'",
            project,
        )
        assert done == "UPDATE 1"
    finally:
        await admin.close()


def names(items: object) -> list[str]:
    assert isinstance(items, list)
    return [item.name for item in items]


@pytest.mark.parametrize("text", NOT_UTF8.values(), ids=NOT_UTF8.keys())
@pytest.mark.parametrize("field", ["body", "description"])
async def test_every_read_reads_the_others_and_names_the_record_that_is_not_utf8(
    dsn: str, project_key: str, field: str, text: bytes
) -> None:
    project = project_key
    await damage(dsn, project, field, text)
    unreadable = UnreadableRecord("broken", f"its {field} is not valid UTF-8 text")
    storage = await PostgresStorage.open(dsn, project)
    try:
        # Twice: the second time on connections the pool has taken back and reset.
        for _ in range(2):
            with pytest.raises(UnreadableRecords) as searched:
                await storage.search(parse_query("shared"), 20)
            with pytest.raises(UnreadableRecords) as listed:
                await storage.list_records()
            with pytest.raises(UnreadableRecords) as read:
                await storage.recall_record("broken")

            assert searched.value.records == listed.value.records == [unreadable]
            assert sorted(names(searched.value.readable)) == READABLE
            assert names(listed.value.readable) == READABLE
            assert read.value.records == [unreadable]
            assert (await storage.recall_record("alpha")).body == "shared words"
            assert await storage.unreadable_records() == [unreadable]
        if field == "description":  # the index reads no body
            with pytest.raises(UnreadableRecords) as indexed:
                await storage.list_index()
            assert names(indexed.value.readable) == READABLE
        else:
            assert names(await storage.list_index()) == NAMES
        # What this version writes still reads back as it was written.
        await storage.save_record(
            RecordContent(name="new", type=RecordType.USER, description="café ☕", body="ü"),
            actor=ALICE,
            at=T0,
        )
        assert (await storage.recall_record("new")).description == "café ☕"
    finally:
        await storage.aclose()


async def test_the_command_searches_and_lists_the_others(
    dsn: str, project_key: str, lazy: Lazy
) -> None:
    project = project_key
    await damage(dsn, project, "body", NOT_UTF8["lone-surrogate"])
    environment = {"LAZY_STORAGE": "postgres", "LAZY_PG_DSN": dsn, "LAZY_PROJECT": project}
    note = "lazy: error: 1 memory record could not be read: 'broken'; `lazy doctor` says why\n"

    searched = lazy("search", "shared", environment=environment)
    listed = lazy("memory", "list", environment=environment)
    shown = lazy("memory", "show", "broken", environment=environment)

    assert (searched.returncode, searched.stderr) == (7, note)
    assert searched.stdout.startswith("alpha (project): alpha note\n")
    assert "zeta (project): zeta note\n" in searched.stdout
    assert "broken" not in searched.stdout
    # The index reads no body: all three are listed.
    assert (listed.returncode, listed.stderr) == (0, "")
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == NAMES
    assert shown.returncode == 7
    assert "'broken' (its body is not valid UTF-8 text)" in shown.stderr
