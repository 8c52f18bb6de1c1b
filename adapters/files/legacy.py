"""The files backend's first format, read where it lies; the first write converts it.

The first format kept the history as one JSON array and every record in full in
memories.json, both rewritten by every save. Reading such a store must write nothing (it may
sit on a read-only mount), so its history is turned in memory into the JSON Lines the
current format holds, and read from there; files/journal.py converts the files themselves
under the write lock, before the first write appends to them.
"""

from __future__ import annotations

import json

_SNIFF_BYTES = 64


def is_legacy_history(start: bytes) -> bool:
    """True if a history file beginning with start is the first format's JSON array."""
    return start[:_SNIFF_BYTES].lstrip().startswith(b"[")


def legacy_lines(data: bytes) -> bytes:
    """The first format's history as this format's lines; ValidationError if it is corrupt."""
    # Here, not at the top: only a store of the first format needs the models to be read, and
    # the launch hook reads stores of the current one without them.
    from pydantic import TypeAdapter

    from lazy_memory.engine.records import HistoryEntry

    entries = TypeAdapter(list[HistoryEntry]).validate_json(data)
    return b"".join(entry.model_dump_json().encode("utf-8") + b"\n" for entry in entries)


def is_legacy_checkpoint(data: bytes) -> bool:
    """True for the first format's memories.json: every record in full, no format number."""
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return isinstance(value, dict) and "history_length" in value and "format" not in value
