"""What `lazy doctor` says of launches: what the last logged one got, and what the installed
Claude Code hook gives the sessions it cannot log.

The launch log (adapters/launch/log.py) has a line for each launch lazy's hook or launcher
served (what it listed of the store, or the UNAVAILABLE marker and why) and one for each the
installed hook command had to answer itself because lazy could not run (channel
`hook command`). Nothing is logged for an agent's launch (agents write nothing), on a store
whose data directory cannot be written, or for a session whose hook never ran; so doctor
names the last *logged* launch, says what is not logged, and reads `.claude/settings.json`
for what would keep the hook from running or from speaking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lazy_memory.engine.wording import counted

if TYPE_CHECKING:
    from lazy_memory.adapters.claude_code.files import InstalledHook

UNLOGGED = (
    "Not logged: launches by agents, launches on a store that cannot be written, and "
    "sessions whose hook did not run."
)
FIX_NOT_FOUND = (
    "put lazy on the PATH Claude Code starts with, or run `lazy init --claude-code` with the "
    "lazy to use, which then names its path"
)
FIX_BY_HAND = "run `lazy memory context --hook` by hand to see why"


def last_launch_line(last: dict[str, Any] | None, newest: tuple[str, int] | None) -> str:
    """Did the last logged launch get the index, the newest record, the marker?"""
    if last is None:
        return "Last logged launch: none yet."
    try:
        if last.get("channel") == "hook command":
            error = str(last["error"])
            fix = FIX_NOT_FOUND if "not found" in error else FIX_BY_HAND
            return (
                f"Last logged launch: {last['at']} (hook): lazy could not be run ({error}), so "
                f"the session got MEMORY INDEX UNAVAILABLE and no index: {fix}."
            )
        said = (
            f"Last logged launch: {last['at']} ({last['channel']}, {last['role']}): "
            f"{last['listed']:,} of {counted(last['records'], 'record')} listed"
        )
        seen = last.get("newest") or {}
    except (KeyError, TypeError, ValueError, AttributeError):
        return "Last logged launch: the launch log's last line is not one lazy wrote."
    if not last.get("available", True):
        return (
            f"{said}; the store could not be read ({last.get('error')}), so the session got "
            "MEMORY INDEX UNAVAILABLE."
        )
    if newest is None:
        return f"{said}."
    name, revision = newest
    if (seen.get("name"), seen.get("revision")) != (name, revision):
        return f"{said}; the newest record, {name} (revision {revision}), was written after it."
    where = "listed inline" if seen.get("listed") else "not listed inline (the hook's limit)"
    return f"{said}; the newest record, {name} (revision {revision}), reached it, {where}."


def hook_line(hook: InstalledHook) -> str | None:
    """What keeps sessions started by hand from the section, None if nothing does."""
    from lazy_memory.adapters.claude_code.files import SETTINGS

    if hook.error is not None:
        return (
            f"Claude Code hook: {hook.error}: Claude Code cannot use it either, so sessions get "
            "no memory section."
        )
    if not hook.found:
        return (
            f"Claude Code hook: none in {SETTINGS}, so a session started by hand gets no "
            "memory section: run `lazy init --claude-code`."
        )
    if hook.missing_matcher is not None:
        return (
            f"Claude Code hook: lazy's has the matcher {hook.missing_matcher!r}, so sessions "
            "that start otherwise (a fork, say) get no memory section: run `lazy init "
            "--claude-code` (it drops the matcher an older lazy wrote), or remove yours."
        )
    if not hook.falls_back:
        return (
            "Claude Code hook: an older lazy's command, which prints nothing at all when lazy "
            "cannot run: run `lazy init --claude-code` to update it."
        )
    return None
