"""The SessionStart hook, `lazy memory context --hook`: the launch context a session starts with.

Installed by `lazy init --claude-code`, it runs at every session start, on its critical path,
so it never fails and never hangs: whatever goes wrong (no store, a corrupt or locked one, a
bad lazy.toml, a daemon or PostgreSQL that is down or mute, a bug) it prints a usable launch
context (the index, the empty-store line, or the UNAVAILABLE marker with the error), says why
on stderr, and exits 0. Its output is fitted to what Claude Code shows of a hook whole
(`[claude_code] hook_limit_chars`, see engine/delivery.py), and it prints nothing when
`lazy launch` already put the launch context in the system prompt.

It is also cheap every time, for a builder and for an agent alike. light_hook answers before
the command line is even parsed: from the launch context the last hook of the role kept while
the store is as it left it (adapters/launch/cache.py), else, on a SQLite or files store, from the
store's plain rows (adapters/launch/state.py), rendered by the engine's one renderer without
pydantic, asyncio or MemoryService. Only another backend, a bad lazy.toml or a store that
reads only through the engine takes run_hook, the whole engine, which says what is wrong.
Both give the same bytes on stdout and stderr, and the same launch-log entry.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from lazy_memory.adapters.config import Settings, settings_or_defaults
from lazy_memory.rpc.cli.context import (
    LAUNCHED_VARIABLE,
    read_launch_context,
    say_unavailable,
    session_role,
    session_role_name,
    unavailable_launch_context,
)

if TYPE_CHECKING:
    from lazy_memory.adapters.launch.cache import Kept
    from lazy_memory.engine.context import LaunchContext, Role


def light_hook() -> bool:
    """The hook without the engine: True once it has answered, False if run_hook must."""
    if os.environ.get(LAUNCHED_VARIABLE):
        return True  # the launch context is in the system prompt: nothing to add
    from lazy_memory.adapters.launch.state import LIGHT_BACKENDS

    settings, config_error = settings_or_defaults()
    if config_error is not None or settings.backend not in LIGHT_BACKENDS or settings.remote:
        return False
    from lazy_memory.adapters.launch.cache import Kept, cache_key, keep, read_kept
    from lazy_memory.adapters.launch.log import record_launch

    role_name = session_role_name()
    # Taken before the store is read: a write meanwhile leaves a key that will not match.
    key = cache_key(settings, role_name)
    last = read_kept(settings, role_name)
    if last is not None and last.key == key:
        _tell(last.warnings)
        _print(last.text)
        record_launch(settings.data_dir, "hook", last.logged)
        return True
    role = session_role()
    printing = _Bounded(role, settings)
    try:
        context, warnings, digest = _light_launch_context(role, settings, last)
    except Exception:  # whatever it is, the engine reads the store and says what is wrong
        printing.cancel()
        return False
    printing.print(warnings, context.text)
    logged = context.as_json()
    record_launch(settings.data_dir, "hook", logged)
    if key is not None:
        keep(settings, role_name, Kept(key, context.text, logged, warnings, digest))
    return True


async def run_hook() -> int:
    """The hook through the engine: the session's launch context within the hook's limit."""
    if os.environ.get(LAUNCHED_VARIABLE):
        return 0
    import asyncio

    from lazy_memory.adapters.launch.cache import Kept, cache_key, keep
    from lazy_memory.adapters.launch.log import record_launch

    role = session_role()
    settings, config_error = settings_or_defaults()
    # Taken before the store is read: a write meanwhile leaves a key that will not match.
    key = None if config_error is not None else cache_key(settings, role.value)
    warnings = _warnings()
    try:
        settings, context = await asyncio.wait_for(
            read_launch_context(role, settings.hook_limit_chars),
            timeout=settings.hook_timeout_seconds,
        )
    except TimeoutError:
        _time_out(role, settings)
    _print(context.text)
    logged = context.as_json()
    record_launch(settings.data_dir, "hook", logged)
    if key is not None and context.available:
        keep(settings, role.value, Kept(key, context.text, logged, warnings.said, None))
    return 0


def _light_launch_context(
    role: Role, settings: Settings, last: Kept | None
) -> tuple[LaunchContext, list[str], str | None]:
    """The hook's launch context from the store's plain rows, what its rendering says on
    stderr, and the digest of the compact it holds (see adapters/launch/state.py)."""
    from lazy_memory.adapters import read_launch_state
    from lazy_memory.engine.context import launch_context, warnings_of
    from lazy_memory.engine.delivery import fit

    state = read_launch_state(settings, None if last is None else last.compact)
    whole = launch_context(role, *state[:3], settings.warn_bytes, state.unreadable)
    context = fit(
        whole,
        state.records,
        settings.hook_limit_chars,
        page_limit=settings.tool_result_limit_chars,
        unreadable=state.unreadable,
    )
    return context, warnings_of(whole), state.compact_digest


class _Bounded:
    """The light hook's output, bounded by `[claude_code] hook_timeout_seconds` as run_hook's
    is: a store on a file system that hangs gives the UNAVAILABLE marker in time, printed by a
    timer thread, and never after the launch context (one of the two prints, whichever comes
    first)."""

    def __init__(self, role: Role, settings: Settings) -> None:
        self._once = threading.Lock()
        self._timer = threading.Timer(settings.hook_timeout_seconds, self._expire, (role, settings))
        self._timer.daemon = True
        self._timer.start()

    def print(self, warnings: list[str], text: str) -> None:
        """Say warnings on stderr and print the launch context, unless the timer came first."""
        self._timer.cancel()
        if not self._once.acquire(blocking=False):
            threading.Event().wait()  # the marker is being printed, and the process ends
        _tell(warnings)
        _print(text)

    def cancel(self) -> None:
        """Stop the timer: run_hook, which bounds itself, answers instead."""
        self._timer.cancel()

    def _expire(self, role: Role, settings: Settings) -> None:
        if self._once.acquire(blocking=False):
            _time_out(role, settings)


def _time_out(role: Role, settings: Settings) -> NoReturn:
    """Print the marker for a store that did not answer in time, and end the process."""
    error = f"the store did not answer within {settings.hook_timeout_seconds:g} s"
    context = unavailable_launch_context(role, settings, error, settings.hook_limit_chars)
    say_unavailable(context)
    _print(context.text)
    # A store that hangs may hold a thread that would keep this process alive at exit.
    os._exit(0)


def _warnings() -> Any:
    """A handler on the root logger for what the hook's rendering logs (an over-size launch context,
    an unreadable compact): said on stderr as Python's last-resort handler would, and kept in
    its `said` to be said again with the launch context."""
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


def _tell(warnings: list[str]) -> None:
    for line in warnings:
        print(line, file=sys.stderr)


def _print(text: str) -> None:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass  # the harness stopped listening; nothing left to tell it
