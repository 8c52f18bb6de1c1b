"""The identity of an engine session, fixed from its environment when it starts."""

from __future__ import annotations

import os
from collections.abc import Mapping

from lazy_memory.adapters.config import Settings
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind

UNNAMED_BUILDER = "unnamed-builder"
EDITOR_VARIABLE = "LAZY_EDITOR"
"""Set (to the editor's name) by an editor that starts `lazy engine` for the person at it."""


def builder_identity(settings: Settings, environ: Mapping[str, str] | None = None) -> Identity:
    """A builder named by LAZY_ACTOR (else its task id); an agent if LAZY_TASK_ID is set at all.

    An engine an editor started (LAZY_EDITOR set, to anything but "") is the person at the
    keyboard instead, `human:<OS user>` exactly as the CLI is: editors write as the human.
    Requests never change it: whatever a request carries, this is who the session is.
    """
    environ = os.environ if environ is None else environ
    if environ.get(EDITOR_VARIABLE):
        # Imported here: the CLI's module is where the one definition of the human lives.
        from lazy_memory.rpc.cli.common import human_identity

        return human_identity(settings.task_id)
    detail = settings.actor or settings.task_id or UNNAMED_BUILDER
    return Identity(actor=Actor(kind=ActorKind.BUILDER, detail=detail), task_id=settings.task_id)
