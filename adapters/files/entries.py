"""A line of the files backend's history read without the record models: what the index keeps.

The backend writes each line as its history entry's `model_dump_json()`: the nine fields in
order, as compact JSON. A line in exactly that form is read here with the json module, in
about the time pydantic takes and without importing it, which the launch hook cannot afford
(files/journal.py reads every line this way first). Any other form (a line edited by hand, a
lone surrogate, a time with a needless offset, a field of another type that pydantic would
convert) gives None, and the journal hands the line to the model, which accepts it or says
why it cannot. So whatever is read here, the model reads too, with the same values.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from lazy_memory.engine.json_time import parse_json_time
from lazy_memory.engine.kinds import RECORD_TYPES, ActorKind, Operation, RecordType

FIELDS = [
    "name",
    "type",
    "description",
    "body",
    "provenance",
    "revision",
    "operation",
    "actor",
    "at",
]
"""A history entry's fields, in the order the models write them."""
_PROVENANCE = ["source", "session_id", "modified", "original_type", "original_name"]
_ACTOR = ["kind", "detail"]
_OPERATIONS = {member.value: member for member in Operation}
_ACTOR_KINDS = frozenset(member.value for member in ActorKind)
_SURROGATE_ESCAPES = (b"\\ud", b"\\uD")
"""How a lone surrogate (which json reads and the models refuse) is written in JSON: \\ud800
to \\udfff. A line holding one of these is left to the model, whatever it escapes."""


class Written(NamedTuple):
    """What the index keeps of a history entry (a HistoryEntry has each of these too)."""

    name: str
    type: RecordType
    description: str
    revision: int
    operation: Operation
    at: datetime


def written(line: bytes) -> Written | None:
    """The entry a history line holds, if it is in the form the backend writes; else None."""
    if any(escape in line for escape in _SURROGATE_ESCAPES):
        return None
    try:
        entry = json.loads(line.decode("utf-8"))
    except ValueError:  # not UTF-8, or not JSON
        return None
    if type(entry) is not dict or list(entry) != FIELDS:
        return None
    name, type_, description, body, provenance, revision, operation, actor, at = entry.values()
    if not (
        type(name) is str
        and type(type_) is str
        and type_ in RECORD_TYPES
        and type(description) is str
        and type(body) is str
        and (provenance is None or _is_provenance(provenance))
        and type(revision) is int
        and revision > 0
        and type(operation) is str
        and operation in _OPERATIONS
        and _is_actor(actor)
        and type(at) is str
    ):
        return None
    time = parse_json_time(at)
    if time is None:
        return None
    return Written(name, RECORD_TYPES[type_], description, revision, _OPERATIONS[operation], time)


def _is_provenance(value: Any) -> bool:
    if type(value) is not dict or list(value) != _PROVENANCE:
        return False
    source, *optional = value.values()
    return type(source) is str and all(item is None or type(item) is str for item in optional)


def _is_actor(value: Any) -> bool:
    if type(value) is not dict or list(value) != _ACTOR:
        return False
    kind, detail = value.values()
    return type(kind) is str and kind in _ACTOR_KINDS and type(detail) is str
