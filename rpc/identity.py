"""The identity of an engine session, fixed from its environment when it starts."""

from __future__ import annotations

from lazy_memory.adapters.config import Settings
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind

UNNAMED_BUILDER = "unnamed-builder"


def builder_identity(settings: Settings) -> Identity:
    """A builder named by LAZY_ACTOR (else its task id); an agent if LAZY_TASK_ID is set at all.

    Requests never change it: whatever a request carries, this is who the session is.
    """
    detail = settings.actor or settings.task_id or UNNAMED_BUILDER
    return Identity(actor=Actor(kind=ActorKind.BUILDER, detail=detail), task_id=settings.task_id)
