"""Typed errors of the memory store, each with a stable JSON-RPC error code.

The tree::

    LazyMemoryError              (base; never raised itself)
    ├── NotFound                 -32010  no live record, or no history, by that name
    ├── InvalidRecord            -32011  a name, type, description or body breaks a rule
    ├── Conflict                 -32012  an if_revision compare-and-swap did not match
    ├── PermissionDenied         -32013  the session may not write (an agent)
    ├── StorageUnavailable       -32014  the store cannot be opened, read or written
    ├── CompactRejected          -32015  a compact candidate would grow the section
    ├── LLMUnavailable           -32016  the summarizer model could not be used
    ├── InvalidConfig            -32017  lazy.toml or a LAZY_* variable is malformed
    └── InvalidQuery             -32018  a search query is malformed (says where)

The codes start at -32010: LSP claims -32001 (UnknownErrorCode) and -32002
(ServerNotInitialized) of the server-error range, and editors speak LSP to the engine.

Adapters translate their drivers' exceptions into these at their boundary; the rpc layer
maps them to JSON-RPC errors and CLI exit statuses in one place each.
"""

from __future__ import annotations


class LazyMemoryError(Exception):
    """Base of every error the memory store raises on purpose."""

    code: int = -32000

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


class InvalidRecord(LazyMemoryError):
    """A record's name, type, description or body breaks a rule of the store."""

    code = -32011


class Conflict(LazyMemoryError):
    """A compare-and-swap save found a different revision than the one it expected."""

    code = -32012


class PermissionDenied(LazyMemoryError):
    """The session's identity may not perform this operation (agents are read-only)."""

    code = -32013


class StorageUnavailable(LazyMemoryError):
    """The store cannot be opened, read or written: missing, corrupt, locked or read-only."""

    code = -32014


class CompactRejected(LazyMemoryError):
    """A compact candidate would have grown the section, or not shrunk the plain index."""

    code = -32015

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


class InvalidConfig(LazyMemoryError):
    """lazy.toml or a LAZY_* environment variable holds something that cannot be used."""

    code = -32017


class InvalidQuery(LazyMemoryError):
    """A search query cannot be parsed; the message names the offending term and its column."""

    code = -32018

    def __init__(self, message: str, *, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


def error_for_code(code: int, message: str) -> LazyMemoryError | None:
    """The typed error a JSON-RPC error code stands for, so clients can raise it again."""
    for error_type in LazyMemoryError.__subclasses__():
        if error_type.code == code:
            return error_type(message)
    return None
