"""An index entry on the wire: one shape, in the index `lazy/memory/recall` lists and in the
entries `lazy/storage/list_index` sends a remote backend.

IndexEntry is that shape as a model, for results validated whole. A store's whole index is
written and read by index_json and index_entries instead, without a model per entry: at
100,000 records, per-entry validation costs more than everything else a remote read does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from lazy_memory.engine import index
from lazy_memory.engine.records import RecordType
from lazy_memory.wire.encoded import Encoded, json_array

_TYPES = {member.value: member for member in RecordType}


class IndexEntry(BaseModel):
    """One live record as an index lists it: `{name, type, description, revision,
    updated_at}`, updated_at in ISO 8601 with its time zone."""

    name: str
    type: RecordType
    description: str
    revision: int
    updated_at: datetime


def index_json(entries: Sequence[index.IndexEntry]) -> list[dict[str, Any]]:
    """Index entries as plain JSON in IndexEntry's shape."""
    return [
        {
            "name": entry.name,
            "type": entry.type.value,
            "description": entry.description,
            "revision": entry.revision,
            "updated_at": _json_time(entry.updated_at),
        }
        for entry in entries
    ]


def encoded_index(batches: Iterable[Sequence[index.IndexEntry]]) -> Encoded:
    """Index entries as a JSON array in IndexEntry's shape, written a batch at a time."""
    return json_array(index_json(batch) for batch in batches)


def _json_time(at: datetime) -> str:
    """A time as IndexEntry's model writes it: ISO 8601, UTC as `Z`."""
    text = at.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def index_entries(items: list[Any]) -> list[index.IndexEntry]:
    """Plain JSON in IndexEntry's shape as index entries; ValueError, TypeError or KeyError
    if one is not."""
    parse = datetime.fromisoformat
    types = _TYPES
    entries = []
    for item in items:
        name, description, revision = item["name"], item["description"], item["revision"]
        if type(name) is not str or type(description) is not str or type(revision) is not int:
            raise ValueError(
                "an index entry is not {name, type, description, revision, updated_at}"
            )
        at = parse(item["updated_at"])
        if at.tzinfo is None:
            raise ValueError(f"the time of {name!r} has no time zone")
        entries.append(index.IndexEntry(name, types[item["type"]], description, revision, at))
    return entries
