"""The compact: a derived, overwritable summary of the index, and the watermark it covers."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from lazy_memory.engine.records import Actor

Watermark = dict[str, int]
"""The (name -> revision) pairs of the live records a compact was generated from."""


class Compact(BaseModel):
    """The one compact slot's content. It has no history: a new compact overwrites it."""

    model_config = ConfigDict(frozen=True)

    preamble: str
    """The compact preamble when it was generated. Written for the versions before each role
    had its own, which show it; launches now open with their role's (engine/context.py)."""
    summary: str
    generator: str
    model: str | None = None
    generated_at: datetime
    generated_by: Actor
    watermark: Watermark
    model_rejected: str | None = None
    """The model (`generator (model)`) whose summary of these same records `auto` asked for
    and rejected by the never-grow rule before writing this mechanical compact instead: doctor
    then knows that compacting again with it does not help."""
