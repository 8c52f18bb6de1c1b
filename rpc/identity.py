"""Who a session is, fixed from its environment when it starts: every way in asks here.

The CLI, the web view and an editor's engine are the person at the keyboard
(`human_identity`); an engine a builder or agent started is that builder or agent
(`builder_identity`). The engine's models are imported inside each function: building the
CLI's parser needs none of them.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings
    from lazy_memory.engine.identity import Identity

UNNAMED_BUILDER = "unnamed-builder"
EDITOR_VARIABLE = "LAZY_EDITOR"
"""Set (to the editor's name) by an editor that starts `lazy engine` for the person at it."""


def human_identity(task_id: str | None) -> Identity:
    """The person: the OS user; an agent for any task id that is not None, even ''."""
    from lazy_memory.engine.identity import Identity
    from lazy_memory.engine.records import Actor, ActorKind

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid-{os.getuid()}"
    return Identity(actor=Actor(kind=ActorKind.HUMAN, detail=user), task_id=task_id)


def builder_identity(settings: Settings, environ: Mapping[str, str] | None = None) -> Identity:
    """A builder named by LAZY_ACTOR (else its task id); an agent if LAZY_TASK_ID is set at all.

    An engine an editor started (LAZY_EDITOR set, to anything but "") is the person at the
    keyboard instead, `human:<OS user>` exactly as the CLI is: editors write as the human.
    Requests never change it: whatever a request carries, this is who the session is.
    """
    from lazy_memory.engine.identity import Identity
    from lazy_memory.engine.records import Actor, ActorKind

    environ = os.environ if environ is None else environ
    if environ.get(EDITOR_VARIABLE):
        return human_identity(settings.task_id)
    detail = settings.actor or settings.task_id or UNNAMED_BUILDER
    return Identity(actor=Actor(kind=ActorKind.BUILDER, detail=detail), task_id=settings.task_id)
