"""memories.json, the files backend's checkpoint: the index as of a point in the history.

`memories.json` is a checkpoint: the index of every name ever written as of the first
`history_bytes` bytes of the history, one row per name (its type, description, revision,
whether it is removed, and the offset and length of its latest entry's line), and beside
them each name's latest write time. Opening the store reads it and replays only the lines
after it; writers replace it atomically (temporary file, sync, rename) once the lines after
it outnumber an eighth of its names, so neither the replay nor the rewriting ever dominates.
It is derived: without it the whole history is replayed, but a checkpoint that cannot be
read is an error, never silently replaced.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ValidationError

from lazy_memory.adapters.durable import replace_file
from lazy_memory.adapters.files_index import Index, Slot
from lazy_memory.adapters.files_layout import (
    FileKey,
    corrupt,
    file_key,
    key_of,
    mode_of,
    validation_reason,
)
from lazy_memory.adapters.files_legacy import is_legacy_checkpoint

FORMAT: Final = 2
"""The format this backend writes; the first one had no number."""

_COLUMNS = ("type", "description", "revision", "removed", "offset", "length")


class Checkpoint(BaseModel):
    """memories.json."""

    format: Literal[2]
    columns: tuple[str, ...] = _COLUMNS
    history_entries: int
    history_bytes: int
    names: dict[str, Slot]
    times: list[datetime] | None = None
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
    try:
        return Checkpoint.model_validate_json(data), key
    except ValidationError as error:
        if is_legacy_checkpoint(data):
            return None, key  # the first format's: the history says all it said
        raise corrupt(path, validation_reason(error)) from error


def write_checkpoint(path: Path, index: Index) -> None:
    """Replace the checkpoint at path with index, and note in index that it now starts there."""
    checkpoint = Checkpoint(
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
