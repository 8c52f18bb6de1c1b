"""The error codes on the wire: JSON-RPC's own, and the engine errors' by their codes.

::

    -32700  PARSE_ERROR           a message is not JSON (wire/framing.py)
    -32600  INVALID_REQUEST       a message is not JSON-RPC, or over the size limit
    -32000  SERVER_ERROR          an engine error without a code of its own; the daemon's
                                  farewell to a connection over its limit
    -32010 to -32018              the engine's errors: each class's `code`, in the one table
                                  of codes and exit statuses (engine/errors.py)

Invalid params are JSON-RPC's -32602, which pygls answers itself.
"""

from __future__ import annotations

from lazy_memory.engine.errors import LISTED, LazyMemoryError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_ERROR = LazyMemoryError.code

_ERRORS_BY_CODE = {error_type.code: error_type for error_type in LISTED}


def error_for_code(code: int, message: str) -> LazyMemoryError | None:
    """The typed error a code stands for, so a client can raise it again; None if none does."""
    error_type = _ERRORS_BY_CODE.get(code)
    return None if error_type is None else error_type(message)
