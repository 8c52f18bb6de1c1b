"""Typed errors of the memory store, each with its JSON-RPC code and CLI exit status.

The tree, and the one table of codes and exit statuses (each class's `code` and
`exit_status`, which the wire (wire/errors.py) and the CLI (rpc/cli/errors.py) read)::

    error                        code    exit
    LazyMemoryError              -32000  1    (base; never raised itself)
    ├── NotFound                 -32010  3    no live record, or no history, by that name
    ├── InvalidRecord            -32011  4    a name, type, description or body breaks a rule
    ├── Conflict                 -32012  5    an if_revision compare-and-swap did not match
    ├── PermissionDenied         -32013  6    the session may not write (an agent)
    ├── StorageUnavailable       -32014  7    the store cannot be opened, read or written
    │   └── UnreadableRecords                 it holds records it cannot read (and read the rest)
    ├── CompactRejected          -32015  8    a compact candidate would grow the section
    ├── LLMUnavailable           -32016  9    the summarizer model could not be used
    ├── InvalidConfig            -32017  4    lazy.toml or a LAZY_* variable is malformed
    └── InvalidQuery             -32018  4    a search query is malformed (says where)

Adapters translate their drivers' exceptions into these at their boundary. The codes start
at -32010: LSP claims -32001 (UnknownErrorCode) and -32002 (ServerNotInitialized) of
JSON-RPC's server-error range, and editors speak LSP to the engine; clients tell errors apart
by them, so they never change. A subclass inherits its listed class's code and exit status
and goes by that class (reported_type): UnreadableRecords is a StorageUnavailable to every
client. A layer's own refinement (the daemon's DaemonFull) keeps its name (reported_name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from lazy_memory.engine.index import UnreadableRecord

_REASONS_SAID = 3
"""How many unreadable records an error's message gives the reason of; doctor lists them all."""


class LazyMemoryError(Exception):
    """Base of every error the memory store raises on purpose."""

    code: ClassVar[int] = -32000
    """Its JSON-RPC error code: JSON-RPC's generic server error, for an error with none of its
    own."""
    exit_status: ClassVar[int] = 1
    """The `lazy` command's exit status when it ends on this error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def data(self) -> dict[str, object]:
        """What a client may act on besides the message: the JSON-RPC error's data."""
        return {}


class NotFound(LazyMemoryError):
    """No live record (or no history) exists under the requested name."""

    code = -32010
    exit_status = 3

    def __init__(self, message: str, *, removed_revision: int | None = None) -> None:
        super().__init__(message)
        self.removed_revision = removed_revision
        """The revision that removed the record, when the name is a removed record's."""

    @property
    def data(self) -> dict[str, object]:
        """The revision that removed the record, when it was removed."""
        return {} if self.removed_revision is None else {"removed_revision": self.removed_revision}


class InvalidRecord(LazyMemoryError):
    """A record's name, type, description or body breaks a rule of the store."""

    code = -32011
    exit_status = 4


class Conflict(LazyMemoryError):
    """A compare-and-swap save found a different revision than the one it expected."""

    code = -32012
    exit_status = 5


class PermissionDenied(LazyMemoryError):
    """The session's identity may not perform this operation (agents are read-only)."""

    code = -32013
    exit_status = 6


class StorageUnavailable(LazyMemoryError):
    """The store cannot be opened, read or written: missing, corrupt, locked or read-only."""

    code = -32014
    exit_status = 7


class UnreadableRecords(StorageUnavailable):
    """The store holds live records it cannot read: rows another tool, an older version or a
    hand wrote in a form this version does not read.

    A read that meets one reads the rest: readable is what it would have returned of them
    (the records, the index entries, the fold's answer, the hits), for the reads that show
    what they can (the launch section, `list`, search) and name these in one line. Anything
    else fails on it as on any StorageUnavailable.
    """

    def __init__(
        self, message: str, records: Sequence[UnreadableRecord], readable: object = None
    ) -> None:
        super().__init__(message)
        self.records = list(records)
        self.readable = readable

    @classmethod
    def found(
        cls, where: str, records: Sequence[UnreadableRecord], readable: object = None
    ) -> UnreadableRecords:
        """The error of a read of the store at where (`the SQLite store at PATH`) that could
        not read records: each named, with the first few reasons."""
        from lazy_memory.engine.visible import shown_name
        from lazy_memory.engine.wording import counted

        said = [f"{shown_name(r.name)} ({r.reason})" for r in records[:_REASONS_SAID]]
        more = len(records) - _REASONS_SAID
        if more > 0:
            said.append(f"and {more:,} more (`lazy doctor` lists them)")
        held = "a record" if len(records) == 1 else counted(len(records), "record")
        return cls(f"{where} holds {held} it cannot read: {', '.join(said)}", records, readable)

    @property
    def data(self) -> dict[str, object]:
        """Each record it could not read: `{"unreadable": [{"name": ..., "reason": ...}]}`."""
        return {"unreadable": [{"name": r.name, "reason": r.reason} for r in self.records]}


class CompactRejected(LazyMemoryError):
    """A compact candidate would have grown the section, or not shrunk the plain index."""

    code = -32015
    exit_status = 8

    def __init__(self, message: str, *, fallback_reason: str | None = None) -> None:
        super().__init__(message)
        self.fallback_reason = fallback_reason
        """Why auto used the mechanical generator before that one was rejected too."""

    @property
    def data(self) -> dict[str, object]:
        """The fallback reason, when auto fell back before the rejection."""
        return {} if self.fallback_reason is None else {"fallback_reason": self.fallback_reason}


class LLMUnavailable(LazyMemoryError):
    """The summarizer model could not be reached or gave no usable answer."""

    code = -32016
    exit_status = 9


class InvalidConfig(LazyMemoryError):
    """lazy.toml or a LAZY_* environment variable holds something that cannot be used."""

    code = -32017
    exit_status = 4


class InvalidQuery(LazyMemoryError):
    """A search query cannot be parsed; the message names the offending term and its column."""

    code = -32018
    exit_status = 4

    def __init__(self, message: str, *, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


LISTED: tuple[type[LazyMemoryError], ...] = (
    NotFound,
    InvalidRecord,
    Conflict,
    PermissionDenied,
    StorageUnavailable,
    CompactRejected,
    LLMUnavailable,
    InvalidConfig,
    InvalidQuery,
)
"""The errors clients tell apart: each has its own code, and its name on the wire."""


def reported_type(error: LazyMemoryError) -> type[LazyMemoryError]:
    """The listed class error goes by (its own, or the nearest it derives from), whose code
    and exit status it inherits."""
    for error_type in type(error).__mro__:
        if error_type in LISTED:
            return error_type
    return type(error)


def reported_name(error: LazyMemoryError) -> str:
    """The type name clients are told: a refinement defined here goes by its listed class's
    (UnreadableRecords is a StorageUnavailable), one a layer defines for itself keeps its own,
    which says more than its class's (the daemon's DaemonFull, a StorageUnavailable)."""
    if type(error).__module__ == __name__:
        return reported_type(error).__name__
    return type(error).__name__
