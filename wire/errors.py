"""The error codes on the wire, in one table: JSON-RPC's own, and one per engine error.

::

    -32700  PARSE_ERROR           a message is not JSON (wire/framing.py)
    -32600  INVALID_REQUEST       a message is not JSON-RPC, or over the size limit
    -32000  SERVER_ERROR          an engine error without a code of its own; the daemon's
                                  farewell to a connection over its limit
    -32010  NotFound              no live record, or no history, by that name
    -32011  InvalidRecord         a name, type, description or body breaks a rule
    -32012  Conflict              an if_revision compare-and-swap did not match
    -32013  PermissionDenied      the session may not write (an agent)
    -32014  StorageUnavailable    the store cannot be opened, read or written
    -32015  CompactRejected       a compact candidate would grow the section
    -32016  LLMUnavailable        the summarizer model could not be used
    -32017  InvalidConfig         lazy.toml or a LAZY_* variable is malformed
    -32018  InvalidQuery          a search query is malformed (says where)

The engine's codes start at -32010: LSP claims -32001 (UnknownErrorCode) and -32002
(ServerNotInitialized) of the server-error range, and editors speak LSP to the engine.
Invalid params are JSON-RPC's -32602, which pygls answers itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from lazy_memory.engine.errors import (
    CompactRejected,
    Conflict,
    InvalidConfig,
    InvalidQuery,
    InvalidRecord,
    LazyMemoryError,
    LLMUnavailable,
    NotFound,
    PermissionDenied,
    StorageUnavailable,
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_ERROR = -32000

ERROR_CODES: Mapping[type[LazyMemoryError], int] = {
    NotFound: -32010,
    InvalidRecord: -32011,
    Conflict: -32012,
    PermissionDenied: -32013,
    StorageUnavailable: -32014,
    CompactRejected: -32015,
    LLMUnavailable: -32016,
    InvalidConfig: -32017,
    InvalidQuery: -32018,
}
"""Each engine error's stable code: clients tell errors apart by it."""

_ERRORS_BY_CODE = {code: error_type for error_type, code in ERROR_CODES.items()}


def code_of(error: LazyMemoryError) -> int:
    """The code error goes on the wire with (its nearest listed class's)."""
    for error_type in type(error).__mro__:
        code = ERROR_CODES.get(error_type)
        if code is not None:
            return code
    return SERVER_ERROR


def error_for_code(code: int, message: str) -> LazyMemoryError | None:
    """The typed error a code stands for, so a client can raise it again; None if none does."""
    error_type = _ERRORS_BY_CODE.get(code)
    return None if error_type is None else error_type(message)
