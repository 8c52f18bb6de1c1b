"""memories.json, the files backend's checkpoint: the index as of a point in the history.

`memories.json` is a checkpoint: the index of every name ever written as of the first
`history_bytes` bytes of the history, one row per name (its type, description, revision,
whether it is removed, and the offset and length of its latest entry's line), and beside
them each name's latest write time. Opening the store reads it and replays only the lines
after it; writers replace it atomically (temporary file, sync, rename) once the lines after
it outnumber an eighth of its names, so neither the replay nor the rewriting ever dominates.
It is derived: without it the whole history is replayed, but a checkpoint that cannot be
read is an error, never silently replaced.

The checkpoint this backend writes is read with the json module, without the models (the
launch hook reads it); one in any other form goes to its pydantic model
(files/checkpoint_model.py), which reads it or says why it cannot, as for a history line
(files/entries.py).
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

from lazy_memory.adapters.files.index import Index, Slot
from lazy_memory.adapters.files.layout import (
    FileKey,
    corrupt,
    file_key,
    key_of,
    mode_of,
    validation_reason,
)
from lazy_memory.adapters.files.legacy import is_legacy_checkpoint
from lazy_memory.engine.kinds import RECORD_TYPES

FORMAT: Final = 2
"""The format this backend writes; the first one had no number."""
COLUMNS = ("type", "description", "revision", "removed", "offset", "length")
"""The fields of each name's row, in order."""
_FIELDS = ["format", "columns", "history_entries", "history_bytes", "names", "times"]
_SURROGATE_ESCAPES = (b"\\ud", b"\\uD")
_UTC_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{6})?Z"
_UTC_TIMES = re.compile(rf"{_UTC_TIME}(?:\n{_UTC_TIME})*")
"""Times one per line, each as the models write a UTC time (json_time): whatever is matched
fromisoformat and the models read alike, to the same time."""


class Checkpoint(NamedTuple):
    """What a checkpoint says: the index as of the first history_bytes of the history."""

    history_entries: int
    history_bytes: int
    names: dict[str, Slot]
    times: list[datetime] | None
    """When each name's latest entry was written, in the order of names. Checkpoints older
    than it lack it (and older versions ignore it): those are replayed like none at all."""

    def times_fit(self) -> bool:
        """True if the checkpoint has every name's time (an older version's has none)."""
        return self.times is not None and len(self.times) == len(self.names)


def read_checkpoint(path: Path) -> tuple[Checkpoint | None, FileKey | None]:
    """The checkpoint at path and its key: None for none or the first format's one."""
    try:
        with path.open("rb") as file:
            key = file_key(os.fstat(file.fileno()))
            data = file.read()
    except FileNotFoundError:
        return None, None
    checkpoint = _as_written(data)
    if checkpoint is not None:
        return checkpoint, key
    from pydantic import ValidationError

    from lazy_memory.adapters.files.checkpoint_model import Checkpoint as Model

    try:
        model = Model.model_validate_json(data)
    except ValidationError as error:
        if is_legacy_checkpoint(data):
            return None, key  # the first format's: the history says all it said
        raise corrupt(path, validation_reason(error)) from error
    return Checkpoint(model.history_entries, model.history_bytes, model.names, model.times), key


def write_checkpoint(path: Path, index: Index) -> None:
    """Replace the checkpoint at path with index, and note in index that it now starts there."""
    from lazy_memory.adapters.durable import replace_file
    from lazy_memory.adapters.files.checkpoint_model import Checkpoint as Model

    checkpoint = Model(
        format=FORMAT,
        history_entries=index.entries,
        history_bytes=index.offset,
        names=index.slots,
        times=[index.times[name] for name in index.slots],
    )
    data = checkpoint.model_dump_json().encode("utf-8") + b"\n"
    replace_file(path, data, mode_of(path))
    index.checkpoint_key = key_of(path)
    index.checkpoint_entries = index.entries


def _as_written(data: bytes) -> Checkpoint | None:
    """The checkpoint data holds if it is in the form write_checkpoint writes, else None.

    Each check runs over a whole column at once (a set of the types found), and the times
    are matched as one text: at 10,000 names this is a few milliseconds, where a check per
    row in Python took ten times that, on every launch of the hook.
    """
    if any(escape in data for escape in _SURROGATE_ESCAPES):
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    if type(value) is not dict or list(value) != _FIELDS:
        return None
    format_, columns, entries, size, rows, stamps = value.values()
    if not (
        type(format_) is int
        and format_ == FORMAT
        and columns == list(COLUMNS)
        and type(entries) is int
        and type(size) is int
        and type(rows) is dict
        and type(stamps) is list
    ):
        return None
    names = _slots(rows)
    times = _times(stamps)
    if names is None or times is None:
        return None
    return Checkpoint(entries, size, names, times)


def _slots(rows: dict[str, Any]) -> dict[str, Slot] | None:
    """Each name's slot, if every row is one as written: six cells of the right types."""
    cells = list(rows.values())
    if not cells:
        return {}
    if set(map(type, cells)) != {list} or set(map(len, cells)) != {len(COLUMNS)}:
        return None
    types, descriptions, revisions, removed, offsets, lengths = zip(*cells, strict=True)
    kinds = {
        "types": set(map(type, types)),
        "descriptions": set(map(type, descriptions)),
        "numbers": set(map(type, revisions + offsets + lengths)),
        "removed": set(map(type, removed)),
    }
    if kinds != {"types": {str}, "descriptions": {str}, "numbers": {int}, "removed": {bool}}:
        return None
    if not set(types) <= RECORD_TYPES.keys():
        return None
    record_types = map(RECORD_TYPES.__getitem__, types)
    slots = zip(record_types, descriptions, revisions, removed, offsets, lengths, strict=True)
    return dict(zip(rows, map(Slot._make, slots), strict=True))


def _times(stamps: list[Any]) -> list[datetime] | None:
    """The times, if each is one as the models write it in UTC, to the second or microsecond."""
    if set(map(type, stamps)) - {str}:
        return None
    if stamps and _UTC_TIMES.fullmatch("\n".join(stamps)) is None:
        return None
    try:
        return list(map(datetime.fromisoformat, stamps))
    except ValueError:  # a day or an hour out of range
        return None
