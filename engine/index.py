"""Index lines: one line per live record, as the launch context and `lazy memory list` show it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any, NamedTuple, Protocol, TypeVar

from lazy_memory.engine.json_time import json_time
from lazy_memory.engine.kinds import RecordType
from lazy_memory.engine.visible import shown_name, visible_line
from lazy_memory.engine.wording import counted


class Indexed(Protocol):
    """What an index line shows of a live record; a Record and an IndexEntry both are one."""

    @property
    def name(self) -> str:
        """The record's name."""
        ...

    @property
    def type(self) -> RecordType:
        """The record's type."""
        ...

    @property
    def description(self) -> str:
        """The record's description, as stored."""
        ...

    @property
    def revision(self) -> int:
        """The record's current revision."""
        ...

    @property
    def updated_at(self) -> datetime:
        """When the current revision was written."""
        ...


IndexedT = TypeVar("IndexedT", bound=Indexed)
"""Any one kind of Indexed, for functions that hand back some of the records they were given."""


class IndexEntry(NamedTuple):
    """A live record without its body or bookkeeping: what the index and compaction read.

    A plain tuple rather than a pydantic model, because a store reads one per live record
    for every launch context: at 100,000 records, validation and per-object overhead would
    cost a tenth of a second and tens of megabytes.
    """

    name: str
    type: RecordType
    description: str
    revision: int
    updated_at: datetime
    """When the live revision was written (timezone-aware, UTC), as Record.updated_at has it."""


class IndexUnavailable(NamedTuple):
    """What a read of the index answers when the store cannot be read: never an empty index."""

    marker: str
    """The UNAVAILABLE marker, exactly the section a launch gets from this store now."""
    error: str
    """Why the store could not be read: one line, made visible."""


class UnreadableRecord(NamedTuple):
    """A live record its store holds but cannot read, and why: a row another tool, an older
    version or a hand wrote in a form this version does not read (a type that is not one of
    the four, a revision or a time that does not parse, text that is not valid UTF-8).

    Every read that meets one reads the rest and says which it could not (engine/errors.py
    UnreadableRecords); the launch section names them in one line (unreadable_note).
    """

    name: str
    """Its name as stored; bytes that are not UTF-8 are shown as `\\xNN` escapes."""
    reason: str
    """Why it cannot be read, in a few words: "its type 'weird' is not one of user, ..."."""


class Newest(NamedTuple):
    """The most recently written live record, and whether a launch context lists it."""

    name: str
    revision: int
    updated_at: datetime
    listed: bool

    @classmethod
    def of(cls, record: Indexed, *, listed: bool) -> Newest:
        """What a launch context says of record, the newest, and whether it lists it."""
        return cls(record.name, record.revision, record.updated_at, listed)

    def as_json(self) -> dict[str, Any]:
        """As JSON, the way the models write their fields."""
        return {
            "name": self.name,
            "revision": self.revision,
            "updated_at": json_time(self.updated_at),
            "listed": self.listed,
        }


class IndexTally:
    """How many live records a read of the index handed over, batch by batch, and the newest
    of them (the first of equals, as max has it)."""

    def __init__(self) -> None:
        self.records = 0
        self.newest: Indexed | None = None

    def counted(self, batches: Iterable[Sequence[IndexedT]]) -> Iterator[Sequence[IndexedT]]:
        """The batches, handed on as they come, each counted on the way."""
        for batch in batches:
            self.records += len(batch)
            newest = max(batch, key=attrgetter("updated_at"), default=None)
            if newest is not None and (
                self.newest is None or newest.updated_at > self.newest.updated_at
            ):
                self.newest = newest
            yield batch


UNREADABLE_NAMED = 10
"""How many unreadable records a note names; the rest it counts."""


def unreadable_note(records: Sequence[UnreadableRecord]) -> str:
    """What the launch section (in parentheses), `list` and search say of the records they
    could not read: how many, their names, and where to learn why."""
    names = ", ".join(shown_name(record.name) for record in records[:UNREADABLE_NAMED])
    if len(records) > UNREADABLE_NAMED:
        names += f" and {len(records) - UNREADABLE_NAMED:,} more"
    return (
        f"{counted(len(records), 'memory record')} could not be read: {names}; "
        "`lazy doctor` says why"
    )


def unreadable_line(records: Sequence[UnreadableRecord]) -> str:
    """The launch section's line naming them: the note, in parentheses."""
    return f"({unreadable_note(records)})"


def collapse_whitespace(text: str) -> str:
    """Text with every run of whitespace (line breaks included) turned into one space."""
    # Every whitespace character but the ASCII space is unprintable, so a printable text with
    # no double, leading or trailing space is already collapsed: three scans at C speed
    # instead of a split and a join, for the one line per record of every launch context.
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def shown_description(description: str) -> str:
    """A description as every one-line output shows it: whitespace collapsed, made visible."""
    # collapse_whitespace's own fast path, inlined: a printable, collapsed description (nearly
    # all of them) is shown as it is, at one line per record of every launch context.
    if (
        description.isprintable()
        and "  " not in description
        and description[:1] != " "
        and description[-1:] != " "
    ):
        return description
    return visible_line(" ".join(description.split()))


def index_line(record: Indexed) -> str:
    """`- name (type): description`, the description's whitespace collapsed, never truncated.

    Name and description are made visible (engine/visible.py): stored text is hostile, and
    this line is what a model reads at every launch and what a terminal shows.
    """
    name = record.name
    if not name.isprintable():
        name = visible_line(name)
    return f"- {name} ({record.type.value}): {shown_description(record.description)}"


def index_page(
    batches: Iterable[Sequence[IndexEntry]], *, page: int, size: int
) -> tuple[list[IndexEntry], int]:
    """The entries of page page (from 1) in pages of size, and how many entries there are."""
    start, stop = (page - 1) * size, page * size
    shown: list[IndexEntry] = []
    count = 0
    for batch in batches:
        if count < stop and count + len(batch) > start:
            shown += batch[max(0, start - count) : stop - count]
        count += len(batch)
    return shown, count
