"""The remote backend's errors: those its daemon answers with, raised here as its store raised them.

The daemon relays a typed error by its wire code (wire/errors.py), and the records its store
could not read as `unreadable: [{name, reason}]`, in an error's data or beside a read's
answer. Here they become the engine's errors again, so a caller of the remote backend sees
what a caller of the daemon's own store would; what goes wrong with the connection itself is
storage.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from lazy_memory.adapters.address import Address
from lazy_memory.engine.errors import LazyMemoryError, StorageUnavailable, UnreadableRecords
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.engine.records import UnreadableRow
from lazy_memory.wire.errors import error_for_code
from lazy_memory.wire.storage import as_unreadable_records

ReadT = TypeVar("ReadT")


def typed_error(error: Mapping[str, Any], address: Address) -> LazyMemoryError:
    """The engine's error for the daemon's JSON-RPC error, or StorageUnavailable naming it."""
    code, message = error.get("code"), str(error.get("message", "no message"))
    typed = error_for_code(code, message) if isinstance(code, int) else None
    if isinstance(typed, StorageUnavailable):
        # A record the daemon's store cannot read: named as its store named it.
        rows = _unreadable_rows(error.get("data"))
        if rows:
            return UnreadableRecords(message, rows)
    return typed or StorageUnavailable(f"the daemon at {address} failed: {message} ({code})")


def read_of_many(address: Address, readable: ReadT, unreadable: list[UnreadableRow]) -> ReadT:
    """readable, the daemon's answer to a read of many records; or UnreadableRecords with it,
    when the daemon's store could not read some, as that store raises it."""
    if not unreadable:
        return readable
    raise UnreadableRecords.found(
        f"the store of the daemon at {address}", as_unreadable_records(unreadable), readable
    )


def _unreadable_rows(data: Any) -> list[UnreadableRecord]:
    """The records an error's data says the daemon's store could not read; [] for none."""
    if not isinstance(data, dict):
        return []
    try:
        rows = TypeAdapter(list[UnreadableRow]).validate_python(data.get("unreadable") or [])
    except ValidationError:
        return []
    return as_unreadable_records(rows)
