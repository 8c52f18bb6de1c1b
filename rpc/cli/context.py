"""`lazy memory context`: the section a launch injects, whole, through the engine.

What every launcher shares: the session's role, and launch_delivery, the section for a role
that never raises (a store that cannot be read gives the UNAVAILABLE marker, said loudly on
stderr). `lazy launch` puts it in the system prompt; the SessionStart hook
(`lazy memory context --hook`) is rpc/cli/hook.py's.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from lazy_memory.adapters.config import Settings, settings_or_defaults

if TYPE_CHECKING:
    import argparse

    from lazy_memory.engine.context import Role
    from lazy_memory.engine.delivery import Delivery


LAUNCHED_VARIABLE = "LAZY_LAUNCHED"
"""Set by `lazy launch` on the session it starts: the section is in its system prompt."""
ROLE_VARIABLE = "LAZY_ROLE"
"""The role a launcher gave the session, for the hook and `lazy mcp` to agree with it."""


async def show_context(arguments: argparse.Namespace) -> int:
    """Print the section a launch of the role would get; as a hook, the one it gets."""
    if arguments.hook:
        from lazy_memory.rpc.cli.hook import run_hook

        return await run_hook()
    from lazy_memory.engine.context import Role
    from lazy_memory.rpc.cli.common import print_json

    _, delivery = await launch_delivery(Role(arguments.role), None)
    if arguments.json:
        print_json(delivery.as_json())
    else:
        print(delivery.text, end="")
    return 0


def session_role() -> Role:
    """The role this session was started as: an agent if it has a task id (even an empty one)."""
    from lazy_memory.engine.context import Role

    return Role(session_role_name())


def session_role_name() -> str:
    """session_role's value, without importing the engine (the kept hook shows no section of
    its own making)."""
    agent = "LAZY_TASK_ID" in os.environ or os.environ.get(ROLE_VARIABLE) == "agent"
    return "agent" if agent else "builder"


async def launch_delivery(role: Role, limit_chars: int | None) -> tuple[Settings, Delivery]:
    """The section a launch of role gets, never an exception: the marker says what failed."""
    from lazy_memory.adapters import open_storage, service_factory
    from lazy_memory.engine.errors import LazyMemoryError
    from lazy_memory.rpc.identity import human_identity

    settings, config_error = settings_or_defaults()
    try:
        if config_error is not None:
            raise config_error
        storage = await open_storage(settings)
        service = service_factory(settings, storage)(human_identity(settings.task_id))
        try:
            delivery = await service.delivery(role, limit_chars)
        finally:
            await service.aclose()
    except LazyMemoryError as error:
        delivery = unavailable_delivery(role, settings, error.message, limit_chars)
    except Exception as error:  # a bug must not blind the launch: the marker names it
        delivery = unavailable_delivery(
            role, settings, f"internal error: {type(error).__name__}: {error}", limit_chars
        )
    say_unavailable(delivery)
    return settings, delivery


def unavailable_delivery(
    role: Role, settings: Settings, error: str, limit_chars: int | None
) -> Delivery:
    from lazy_memory.engine.context import unavailable_context
    from lazy_memory.engine.delivery import deliver

    context = unavailable_context(role, error, settings.warn_bytes)
    return deliver(context, [], limit_chars, page_limit=settings.tool_result_limit_chars)


def say_unavailable(delivery: Delivery) -> None:
    """Tell the person at the terminal, loudly, when the launch gets no index."""
    if not delivery.available:
        print(
            f"lazy: error: launches get MEMORY INDEX UNAVAILABLE: {delivery.error}",
            file=sys.stderr,
        )
