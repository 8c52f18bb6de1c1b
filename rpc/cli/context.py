"""`lazy memory context`: the launch context a launch injects, whole, through the engine.

What every launcher shares: the session's role, and read_launch_context, the launch context
of a role that never raises (a store that cannot be read gives the UNAVAILABLE marker, said
loudly on stderr). `lazy launch` puts it in the system prompt; the SessionStart hook
(`lazy memory context --hook`) is rpc/cli/hook.py's.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from lazy_memory.adapters.config import Settings, is_agent, settings_or_defaults

if TYPE_CHECKING:
    import argparse

    from lazy_memory.engine.context import LaunchContext, Role


LAUNCHED_VARIABLE = "LAZY_LAUNCHED"
"""Set by `lazy launch` on the session it starts: the launch context is in its system prompt."""
ROLE_VARIABLE = "LAZY_ROLE"
"""The role a launcher gave the session, for the hook to agree with it. A role, not a write
gate: `agent` gives the agent's launch context, while only LAZY_TASK_ID makes an agent."""


async def show_context(arguments: argparse.Namespace) -> int:
    """Print the launch context of the role; as a hook, the one this session gets."""
    if arguments.hook:
        from lazy_memory.rpc.cli.hook import run_hook

        return await run_hook()
    from lazy_memory.engine.context import Role
    from lazy_memory.rpc.cli.common import print_json

    _, context = await read_launch_context(Role(arguments.role), None)
    if arguments.json:
        print_json(context.as_json())
    else:
        print(context.text, end="")
    return 0


def session_role() -> Role:
    """The role this session was started as: an agent if it is one (adapters/config.py
    is_agent) or a launcher gave it the agent's role (ROLE_VARIABLE)."""
    from lazy_memory.engine.context import Role

    return Role(session_role_name())


def session_role_name() -> str:
    """session_role's value, without importing the engine (the kept hook shows no launch
    context of its own making)."""
    agent = is_agent(os.environ) or os.environ.get(ROLE_VARIABLE) == "agent"
    return "agent" if agent else "builder"


async def read_launch_context(
    role: Role, limit_chars: int | None
) -> tuple[Settings, LaunchContext]:
    """The launch context of role for a channel of limit_chars (None: any size), never an
    exception: the marker says what failed."""
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
            context = await service.launch_context(role, limit_chars)
        finally:
            await service.aclose()
    except LazyMemoryError as error:
        context = unavailable_launch_context(role, settings, error.message, limit_chars)
    except Exception as error:  # a bug must not blind the launch: the marker names it
        context = unavailable_launch_context(
            role, settings, f"internal error: {type(error).__name__}: {error}", limit_chars
        )
    say_unavailable(context)
    return settings, context


def unavailable_launch_context(
    role: Role, settings: Settings, error: str, limit_chars: int | None
) -> LaunchContext:
    """The marker for a channel of limit_chars, saying error."""
    from lazy_memory.engine.context import unavailable_context
    from lazy_memory.engine.delivery import fit

    context = unavailable_context(role, error, settings.warn_bytes)
    return fit(context, [], limit_chars, page_limit=settings.tool_result_limit_chars)


def say_unavailable(context: LaunchContext) -> None:
    """Tell the person at the terminal, loudly, when the launch gets no index."""
    if not context.available:
        print(
            f"lazy: error: launches get MEMORY INDEX UNAVAILABLE: {context.error}",
            file=sys.stderr,
        )
