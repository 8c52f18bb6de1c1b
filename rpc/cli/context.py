"""`lazy memory context`: the section a launch injects, and the SessionStart hook that prints it.

The hook (`lazy memory context --hook`, installed by `lazy init --claude-code`) is on every
launch's critical path, so it never fails and never hangs: whatever goes wrong (no store, a
corrupt or locked one, a bad lazy.toml, a daemon or PostgreSQL that is down or mute, a bug)
it prints a usable section (the index, the empty-store line, or the UNAVAILABLE marker with
the error), says why on stderr, and exits 0. Its output is fitted to what Claude Code shows
of a hook whole (`[claude_code] hook_limit_chars`, see engine/delivery.py), and it prints
nothing when `lazy launch` already put the section in the system prompt.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from lazy_memory.adapters.config import Settings, settings_or_defaults
from lazy_memory.rpc.cli.common import print_json

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
        return await run_hook()
    from lazy_memory.engine.context import Role

    _, delivery = await launch_delivery(Role(arguments.role), None)
    if arguments.json:
        print_json(delivery.as_json())
    else:
        print(delivery.text, end="")
    return 0


def kept_hook() -> bool:
    """The hook, answered from the section the last one kept if the store has not changed
    since (adapters/launch_cache.py), with no engine and no asyncio; False if it must render."""
    if os.environ.get(LAUNCHED_VARIABLE) or _is_agent():
        return False
    from lazy_memory.adapters.launch_cache import cache_key, kept_section

    settings, config_error = settings_or_defaults()
    key = None if config_error is not None else cache_key(settings, "builder")
    kept = None if key is None else kept_section(settings, key)
    if kept is None:
        return False
    from lazy_memory.adapters.launch_log import record_launch

    for line in kept["warnings"]:
        print(line, file=sys.stderr)
    _print(kept["text"])
    record_launch(settings.data_dir, "hook", kept["delivery"])
    return True


async def run_hook() -> int:
    """The SessionStart hook: the section for the session's role within the hook's limit."""
    if os.environ.get(LAUNCHED_VARIABLE):
        return 0
    import asyncio

    from lazy_memory.adapters.launch_cache import cache_key, keep_section
    from lazy_memory.adapters.launch_log import record_launch

    role = session_role()
    settings, config_error = settings_or_defaults()
    # Taken before the store is read: a write meanwhile leaves a key that will not match.
    key = None if config_error is not None else cache_key(settings, role.value)
    warnings = _warnings()
    try:
        settings, delivery = await asyncio.wait_for(
            launch_delivery(role, settings.hook_limit_chars),
            timeout=settings.hook_timeout_seconds,
        )
    except TimeoutError:
        error = f"the store did not answer within {settings.hook_timeout_seconds:g} s"
        delivery = _unavailable(role, settings, error, settings.hook_limit_chars)
        _say(delivery)
        _print(delivery.text)
        # A store that hangs may hold a thread that would keep this process alive at exit.
        os._exit(0)
    _print(delivery.text)
    logged = delivery.as_json()
    record_launch(settings.data_dir, "hook", logged)
    if key is not None and role.value == "builder" and delivery.available:
        keep_section(settings, key, delivery.text, logged, warnings.said)
    return 0


def _warnings() -> Any:
    """A handler on the root logger for what the hook's rendering logs (an over-size section,
    an unreadable compact): said on stderr as Python's last-resort handler would, and kept in
    its `said` to be said again with the section."""
    import logging

    class Warnings(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.WARNING)
            self.said: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            line = record.getMessage()
            self.said.append(line)
            print(line, file=sys.stderr)

    handler = Warnings()
    logging.getLogger().addHandler(handler)
    return handler


def session_role() -> Role:
    """The role this session was started as: an agent if it has a task id (even an empty one)."""
    from lazy_memory.engine.context import Role

    return Role.AGENT if _is_agent() else Role.BUILDER


def _is_agent() -> bool:
    return "LAZY_TASK_ID" in os.environ or os.environ.get(ROLE_VARIABLE) == "agent"


async def launch_delivery(role: Role, limit_chars: int | None) -> tuple[Settings, Delivery]:
    """The section a launch of role gets, never an exception: the marker says what failed."""
    from lazy_memory.adapters import open_storage, service_factory
    from lazy_memory.engine.errors import LazyMemoryError
    from lazy_memory.rpc.cli.common import human_identity

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
        delivery = _unavailable(role, settings, error.message, limit_chars)
    except Exception as error:  # a bug must not blind the launch: the marker names it
        delivery = _unavailable(
            role, settings, f"internal error: {type(error).__name__}: {error}", limit_chars
        )
    _say(delivery)
    return settings, delivery


def _unavailable(role: Role, settings: Settings, error: str, limit_chars: int | None) -> Delivery:
    from lazy_memory.engine.context import unavailable_context
    from lazy_memory.engine.delivery import deliver

    context = unavailable_context(role, error, settings.warn_bytes)
    return deliver(context, [], limit_chars, page_limit=settings.tool_result_limit_chars)


def _say(delivery: Delivery) -> None:
    """Tell the person at the terminal, loudly, when the launch gets no index."""
    if not delivery.available:
        print(
            f"lazy: error: launches get MEMORY INDEX UNAVAILABLE: {delivery.error}",
            file=sys.stderr,
        )


def _print(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass  # the harness stopped listening; nothing left to tell it
