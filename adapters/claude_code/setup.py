"""What `lazy init --claude-code` adds to Claude Code's project files, and takes back out.

Pure functions over the parsed JSON of `.claude/settings.json`, `.claude/settings.local.json`
and `.mcp.json`: each returns a new document and never reorders or rewrites a key it does not
own (files.py turns the new document into the file's text, edited in place). What
lazy owns: the SessionStart hook whose command runs `... memory context --hook` (its command
and timeout, and the matcher an older lazy gave it), the MCP server named `lazy` (its
command, args and alwaysLoad), that name in `enabledMcpjsonServers`, and `autoMemoryEnabled`
only when lazy set it. Each install function writes into `record` what it created or
replaced, so the matching removal can put back exactly what was there (see note.py
for where that record is kept). A removal without a record (the note was lost) infers
conservatively: it takes out what is recognisably lazy's and leaves anything that might be
the user's.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from dataclasses import dataclass
from typing import Any

from lazy_memory.adapters.claude_code.hook import (
    claude_code_timeout,
    hook_command,
    is_lazy_hook_command,
)

JsonObject = dict[str, Any]

SERVER_NAME = "lazy"
HOOK_EVENT = "SessionStart"
LEGACY_MATCHER = "startup|resume|clear|compact"
"""The matcher an older lazy wrote: it misses `fork` (Claude Code 2.1.332) and any later
source. lazy's hook now has no matcher, which Claude Code fires on every source."""
MATCH_ALL = ("", "*")
"""Matchers that, like none at all, match every source."""
AUTO_MEMORY_KEY = "autoMemoryEnabled"
APPROVAL_KEY = "enabledMcpjsonServers"
REJECTION_KEY = "disabledMcpjsonServers"
ALWAYS_LOAD_KEY = "alwaysLoad"
"""On a `.mcp.json` server: Claude Code waits for it at start-up (up to MCP_CONNECT_TIMEOUT_MS,
5 s) and offers its tools with their schemas, not deferred behind ToolSearch (2.1.332)."""
MODULE = "lazy_memory.rpc.cli"


class UnexpectedShape(ValueError):
    """A key lazy must edit holds something other than the JSON type Claude Code expects."""


@dataclass(frozen=True)
class Invocation:
    """The words that start this lazy: `lazy`, an absolute script path, or python -m."""

    words: tuple[str, ...]

    @property
    def portable(self) -> bool:
        """Whether the words mean the same on a teammate's machine: `lazy` on the PATH."""
        return self.words == ("lazy",)

    def hook_command(self, bound: int, log_dir: str) -> str:
        """The SessionStart hook's shell command (see hook.py)."""
        return hook_command(self.words, bound=bound, log_dir=log_dir)

    def mcp_server(self) -> JsonObject:
        """The `.mcp.json` entry that starts `lazy mcp`; lazy finds the store from where
        Claude Code starts it (the project), as the hook does."""
        return {"command": self.words[0], "args": [*self.words[1:], "mcp"], ALWAYS_LOAD_KEY: True}


def current_invocation() -> Invocation:
    """How Claude Code should start the lazy running now."""
    return running_invocation(sys.argv[0], shutil.which("lazy"), sys.executable)


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


def hook_entry(command: str, bound: int) -> JsonObject:
    """The SessionStart matcher group lazy adds: no matcher, so it fires on every source."""
    return {
        "hooks": [{"type": "command", "command": command, "timeout": claude_code_timeout(bound)}]
    }


def is_lazy_hook(hook: object) -> bool:
    """Whether a hook entry is lazy's own (its command runs `... memory context --hook`)."""
    return isinstance(hook, dict) and is_lazy_hook_command(hook.get("command"))


def lazy_hook_commands(settings: JsonObject) -> list[str]:
    """The command of every lazy hook in settings' SessionStart groups."""
    return [hook["command"] for _, hook in _session_start_hooks(settings) if is_lazy_hook(hook)]


def lazy_hook_matchers(settings: JsonObject) -> list[object]:
    """The matcher of every SessionStart group holding a lazy hook (None: no matcher)."""
    return [
        group.get("matcher") for group, hook in _session_start_hooks(settings) if is_lazy_hook(hook)
    ]


def misses_sources(matcher: object) -> bool:
    """Whether a SessionStart group with this matcher can miss a source: any but none or all."""
    return matcher is not None and matcher not in MATCH_ALL


def install_hook(settings: JsonObject, command: str, bound: int, record: JsonObject) -> JsonObject:
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
    for group, hook in _session_start_hooks(new):
        if is_lazy_hook(hook):
            hook["command"] = command
            hook["timeout"] = claude_code_timeout(bound)
            found = True
            # The matcher an older lazy wrote misses sources; one the user chose stays.
            if group.get("matcher") == LEGACY_MATCHER and all(map(is_lazy_hook, group["hooks"])):
                del group["matcher"]
    if not found:
        groups.append(hook_entry(command, bound))
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
    """`.mcp.json` with the `lazy` server.

    The entry lazy wrote (as record says) gets lazy's keys and keeps any other the user added
    since, but for the LAZY_DATA an older lazy pinned in `env`; an entry of that name lazy did
    not write (or whose note is lost) is noted, to be put back, then replaced.
    """
    new = copy.deepcopy(mcp)
    servers = new.get("mcpServers")
    if servers is None:
        servers = new["mcpServers"] = {}
        record["mcp_servers"] = True
    elif not isinstance(servers, dict):
        raise UnexpectedShape("`mcpServers` is not a JSON object")
    current = servers.get(SERVER_NAME)
    if current is None:
        record["server"] = True
        servers[SERVER_NAME] = server
    elif isinstance(current, dict) and record.get("server"):
        if _legacy_pin(current.get("env")):
            del current["env"]
        current.update(server)
    else:
        if "server_previous" not in record:
            record["server_previous"] = current
        servers[SERVER_NAME] = server
    return new


def launch_mcp_config(
    project_server: object, invocation: Invocation, arguments: list[str]
) -> str | None:
    """The `--mcp-config` a launched session needs for lazy's tools in its first request.

    None when the project's `.mcp.json` already starts an always-loaded `lazy` (and claude's
    arguments do not say to ignore it); else a `lazy` server that Claude Code loads in place
    of the project's one of that name (measured on 2.1.197 and 2.1.332: one server, not two):
    the project's entry with alwaysLoad, or, without one, this lazy's.
    """
    strict = "--strict-mcp-config" in arguments
    if isinstance(project_server, dict):
        if project_server.get(ALWAYS_LOAD_KEY) is True and not strict:
            return None
        server = {**project_server, ALWAYS_LOAD_KEY: True}
    else:
        server = invocation.mcp_server()
    return json.dumps({"mcpServers": {SERVER_NAME: server}}, separators=(",", ":"))


def _legacy_pin(env: object) -> bool:
    """Whether env is the store path an older lazy pinned on its server, and nothing else."""
    return isinstance(env, dict) and list(env) == ["LAZY_DATA"]


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


def _session_start_hooks(settings: JsonObject) -> list[tuple[JsonObject, Any]]:
    """Every (group, hook) of settings' SessionStart groups."""
    hooks = settings.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        return []
    return [
        (group, hook)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
    ]


def _created(record: JsonObject | None, key: str) -> bool:
    # With no record, a container lazy's removal emptied is taken to be lazy's: a user keeps
    # no empty SessionStart list of their own around lazy's one entry.
    return record is None or bool(record.get(key))
