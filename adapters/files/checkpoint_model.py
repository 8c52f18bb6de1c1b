"""memories.json as a pydantic model: how the files backend writes its checkpoint, and reads
one that is not in the form it writes (files/checkpoint.py reads that form without it)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from lazy_memory.adapters.files.checkpoint import COLUMNS
from lazy_memory.adapters.files.index import Slot


class Checkpoint(BaseModel):
    """memories.json."""

    format: Literal[2]
    columns: tuple[str, ...] = COLUMNS
    history_entries: int
    history_bytes: int
    names: dict[str, Slot]
    times: list[datetime] | None = None
    """When each name's latest entry was written, in the order of names. Checkpoints older
    than it lack it (and older versions ignore it): those are replayed like none at all."""
