"""The kinds a record, a write and its actor come in, as plain enums.

In a module of their own, which imports only the constants (where the record types are
spelled, for the CLI's parser to read too), so that what renders a launch's section
(engine/index.py, engine/delivery.py) and the readers that hand it plain rows (adapters/)
name them without importing the record models, and pydantic with them (engine/records.py
re-exports them, where the rest of the code has always found them).
"""

from __future__ import annotations

from enum import StrEnum

from lazy_memory.engine.constants import RECORD_TYPE_NAMES


class RecordType(StrEnum):
    """The four kinds of knowledge a record holds."""

    USER, FEEDBACK, PROJECT, REFERENCE = RECORD_TYPE_NAMES


RECORD_TYPES = {member.value: member for member in RecordType}
"""A stored type's record type, looked up without an enum call per row."""


class ActorKind(StrEnum):
    """Who made a write: a person at the CLI, a builder over RPC/MCP, or the system (imports)."""

    HUMAN = "human"
    BUILDER = "builder"
    SYSTEM = "system"


class Operation(StrEnum):
    """What a history entry records."""

    SAVE = "save"
    REMOVE = "rm"
    IMPORT = "import"
