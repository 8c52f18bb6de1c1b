"""Typed errors of the memory store.

The tree::

    LazyMemoryError              (base; never raised itself)
    ├── NotFound                 no live record, or no history, by that name
    ├── InvalidRecord            a name, type, description or body breaks a rule
    ├── Conflict                 an if_revision compare-and-swap did not match
    ├── PermissionDenied         the session may not write (an agent)
    ├── StorageUnavailable       the store cannot be opened, read or written
    ├── CompactRejected          a compact candidate would grow the section
    ├── LLMUnavailable           the summarizer model could not be used
    ├── InvalidConfig            lazy.toml or a LAZY_* variable is malformed
    └── InvalidQuery             a search query is malformed (says where)

Adapters translate their drivers' exceptions into these at their boundary; each has a
stable JSON-RPC error code in the wire's table (wire/errors.py), and the rpc layer maps
them to JSON-RPC errors and CLI exit statuses in one place each.
"""

from __future__ import annotations


class LazyMemoryError(Exception):
    """Base of every error the memory store raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def data(self) -> dict[str, object]:
        """What a client may act on besides the message: the JSON-RPC error's data."""
        return {}


class NotFound(LazyMemoryError):
    """No live record (or no history) exists under the requested name."""

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


class Conflict(LazyMemoryError):
    """A compare-and-swap save found a different revision than the one it expected."""


class PermissionDenied(LazyMemoryError):
    """The session's identity may not perform this operation (agents are read-only)."""


class StorageUnavailable(LazyMemoryError):
    """The store cannot be opened, read or written: missing, corrupt, locked or read-only."""


class CompactRejected(LazyMemoryError):
    """A compact candidate would have grown the section, or not shrunk the plain index."""

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


class InvalidConfig(LazyMemoryError):
    """lazy.toml or a LAZY_* environment variable holds something that cannot be used."""


class InvalidQuery(LazyMemoryError):
    """A search query cannot be parsed; the message names the offending term and its column."""

    def __init__(self, message: str, *, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column
