"""What `lazy init --claude-code` adds to Claude Code's project files, and takes back out.

Pure functions over the parsed JSON of `.claude/settings.json`, `.claude/settings.local.json`
and `.mcp.json`: each returns a new document and never reorders or rewrites a key it does not
own. What lazy owns: the SessionStart hook whose command ends in ` memory context --hook`, the
MCP server named `lazy`, that name in `enabledMcpjsonServers`, and `autoMemoryEnabled` only
when lazy set it. Each install function writes into `record` what it created or replaced, so
the matching removal can put back exactly what was there (see claude_code_files for where
that record is kept). A removal without a record (the note was lost) infers conservatively:
it takes out what is recognisably lazy's and leaves anything that might be the user's.
"""

from __future__ import annotations

import copy
import os
import shlex
from dataclasses import dataclass
from typing import Any

JsonObject = dict[str, Any]

SERVER_NAME = "lazy"
HOOK_EVENT = "SessionStart"
HOOK_MATCHER = "startup|resume|clear|compact"
"""Every SessionStart source Claude Code has: a new session, --resume, /clear, a compaction."""
HOOK_TIMEOUT_SECONDS = 30
HOOK_SUFFIX = " memory context --hook"
"""How lazy's own hook entry is recognised on a re-run, whatever path starts lazy."""
AUTO_MEMORY_KEY = "autoMemoryEnabled"
APPROVAL_KEY = "enabledMcpjsonServers"
REJECTION_KEY = "disabledMcpjsonServers"
MODULE = "lazy_memory.rpc.cli"


class UnexpectedShape(ValueError):
    """A key lazy must edit holds something other than the JSON type Claude Code expects."""


@dataclass(frozen=True)
class Invocation:
    """The words that start this lazy: `lazy`, an absolute script path, or python -m."""

    words: tuple[str, ...]

    def hook_command(self) -> str:
        """The SessionStart hook's shell command."""
        return shlex.join([*self.words, "memory", "context", "--hook"])

    def mcp_server(self, data_dir: str) -> JsonObject:
        """The `.mcp.json` entry that starts `lazy mcp` on the project's store."""
        return {
            "command": self.words[0],
            "args": [*self.words[1:], "mcp"],
            "env": {"LAZY_DATA": data_dir},
        }


def running_invocation(argv0: str, on_path: str | None, executable: str) -> Invocation:
    """How Claude Code should start the lazy that is running now.

    `lazy` when the `lazy` found on PATH (on_path) is the very script running (argv0), so the
    files stay portable; else that script's absolute path; and when lazy runs as a module
    (`python -m lazy_memory.rpc.cli`, argv0 its __main__.py) there is no script at all, so
    the interpreter and the module.
    """
    if argv0 in ("", "-c", "-m") or argv0.endswith(".py"):
        return Invocation((executable, "-m", MODULE))
    script = os.path.abspath(argv0)
    if on_path is not None and _same_file(on_path, script):
        return Invocation(("lazy",))
    return Invocation((script,))


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def hook_entry(command: str) -> JsonObject:
    """The SessionStart matcher group lazy adds."""
    return {
        "matcher": HOOK_MATCHER,
        "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}],
    }


def is_lazy_hook(hook: object) -> bool:
    """Whether a hook entry is lazy's own (its command runs `... memory context --hook`)."""
    return (
        isinstance(hook, dict)
        and isinstance(hook.get("command"), str)
        and hook["command"].endswith(HOOK_SUFFIX)
    )


def lazy_hook_commands(settings: JsonObject) -> list[str]:
    """The command of every lazy hook in settings' SessionStart groups."""
    return [hook["command"] for hook in _session_start_hooks(settings) if is_lazy_hook(hook)]


def install_hook(settings: JsonObject, command: str, record: JsonObject) -> JsonObject:
    """Settings with lazy's SessionStart hook: updated in place if present, else appended."""
    new = copy.deepcopy(settings)
    hooks = new.get("hooks")
    if hooks is None:
        hooks = new["hooks"] = {}
        record["hooks"] = True
    elif not isinstance(hooks, dict):
        raise UnexpectedShape("`hooks` is not a JSON object")
    groups = hooks.get(HOOK_EVENT)
    if groups is None:
        groups = hooks[HOOK_EVENT] = []
        record["session_start"] = True
    elif not isinstance(groups, list):
        raise UnexpectedShape(f"`hooks.{HOOK_EVENT}` is not a JSON array")
    found = False
    for hook in _session_start_hooks(new):
        if is_lazy_hook(hook):
            # Only the command is lazy's to change: a matcher or timeout the user tuned stays.
            hook["command"] = command
            found = True
    if not found:
        groups.append(hook_entry(command))
    return new


def remove_hook(settings: JsonObject, record: JsonObject | None) -> JsonObject:
    """Settings without lazy's hook, nor the containers it leaves empty if lazy made them."""
    new = copy.deepcopy(settings)
    hooks = new.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    if not isinstance(hooks, dict) or not isinstance(groups, list):
        return new
    removed = False
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = [hook for hook in group["hooks"] if not is_lazy_hook(hook)]
        if len(kept) == len(group["hooks"]):
            continue
        removed = True
        group["hooks"] = kept
        if not kept:
            groups.remove(group)
    if removed and not groups and _created(record, "session_start"):
        del hooks[HOOK_EVENT]
    if removed and not hooks and _created(record, "hooks"):
        del new["hooks"]
    return new


def install_approval(local: JsonObject, record: JsonObject) -> JsonObject:
    """Local settings that approve the `lazy` server of `.mcp.json` (Claude Code asks otherwise)."""
    new = copy.deepcopy(local)
    approved = new.get(APPROVAL_KEY)
    if approved is None:
        approved = new[APPROVAL_KEY] = []
        record["approval_list"] = True
    elif not isinstance(approved, list):
        raise UnexpectedShape(f"`{APPROVAL_KEY}` is not a JSON array")
    if SERVER_NAME not in approved:
        approved.append(SERVER_NAME)
        record["approval"] = True
    return new


def remove_approval(local: JsonObject, record: JsonObject | None) -> JsonObject:
    """Local settings without the approval lazy added; a user's own approval stays."""
    new = copy.deepcopy(local)
    approved = new.get(APPROVAL_KEY)
    # Without a record the approval may be the user's own answer to Claude Code's prompt.
    if record is None or not record.get("approval") or not isinstance(approved, list):
        return new
    if SERVER_NAME in approved:
        approved.remove(SERVER_NAME)
    if not approved and record.get("approval_list"):
        del new[APPROVAL_KEY]
    return new


def is_rejected(local: JsonObject) -> bool:
    """Whether the user told Claude Code not to start lazy's server (a rejection wins)."""
    rejected = local.get(REJECTION_KEY)
    return isinstance(rejected, list) and SERVER_NAME in rejected


def auto_memory_is_off(settings: JsonObject) -> bool:
    """Whether settings already turn Claude Code's own auto memory off."""
    return settings.get(AUTO_MEMORY_KEY) is False


def turn_auto_memory_off(settings: JsonObject, record: JsonObject) -> JsonObject:
    """Settings with `autoMemoryEnabled: false`; what it was before goes into record."""
    if auto_memory_is_off(settings):
        return copy.deepcopy(settings)
    new = copy.deepcopy(settings)
    record["auto_memory"] = {"previous": new[AUTO_MEMORY_KEY]} if AUTO_MEMORY_KEY in new else {}
    new[AUTO_MEMORY_KEY] = False
    return new


def restore_auto_memory(settings: JsonObject, record: JsonObject | None) -> JsonObject:
    """Settings with autoMemoryEnabled as it was, if lazy turned it off and it still is."""
    new = copy.deepcopy(settings)
    noted = None if record is None else record.get("auto_memory")
    if not isinstance(noted, dict) or not auto_memory_is_off(new):
        return new
    if "previous" in noted:
        new[AUTO_MEMORY_KEY] = noted["previous"]
    else:
        del new[AUTO_MEMORY_KEY]
    return new


def install_server(mcp: JsonObject, server: JsonObject, record: JsonObject) -> JsonObject:
    """`.mcp.json` with the `lazy` server; another server of that name is noted, then replaced."""
    new = copy.deepcopy(mcp)
    servers = new.get("mcpServers")
    if servers is None:
        servers = new["mcpServers"] = {}
        record["mcp_servers"] = True
    elif not isinstance(servers, dict):
        raise UnexpectedShape("`mcpServers` is not a JSON object")
    current = servers.get(SERVER_NAME)
    if current == server:
        return new
    if current is None:
        record["server"] = True
    elif not record.get("server") and "server_previous" not in record:
        # A `lazy` entry lazy did not write (or whose note is lost): keep it to put back.
        record["server_previous"] = current
    servers[SERVER_NAME] = server
    return new


def remove_server(mcp: JsonObject, record: JsonObject | None) -> JsonObject:
    """`.mcp.json` with the `lazy` server taken out, or put back as it was before lazy."""
    new = copy.deepcopy(mcp)
    servers = new.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return new
    if record is not None and "server_previous" in record:
        servers[SERVER_NAME] = record["server_previous"]
        return new
    if record is not None and not record.get("server"):
        return new
    if record is None and not looks_like_lazy_server(servers[SERVER_NAME]):
        return new
    del servers[SERVER_NAME]
    if not servers and _created(record, "mcp_servers"):
        del new["mcpServers"]
    return new


def looks_like_lazy_server(server: object) -> bool:
    """Whether an MCP server entry starts `lazy mcp` (by script name or as the module)."""
    if not isinstance(server, dict):
        return False
    command, args = server.get("command"), server.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or args[-1:] != ["mcp"]:
        return False
    return os.path.basename(command) == "lazy" or args[:2] == ["-m", MODULE]


def _session_start_hooks(settings: JsonObject) -> list[Any]:
    hooks = settings.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        return []
    return [
        hook
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
    ]


def _created(record: JsonObject | None, key: str) -> bool:
    # With no record, a container lazy's removal emptied is taken to be lazy's: a user keeps
    # no empty SessionStart list of their own around lazy's one entry.
    return record is None or bool(record.get(key))
