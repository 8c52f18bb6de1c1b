"""Claude Code's project files as `lazy init --claude-code` reads, plans and writes them.

A plan reads `.claude/settings.json`, `.claude/settings.local.json` and `.mcp.json`, applies
claude_code_setup's pure edits, and says per file what would change, before anything is
written: a file that is not a JSON object stops the whole plan untouched. Writes are atomic
(a temporary file in the same folder, renamed over the old one, its mode kept). What a set-up
created or replaced is kept in a note in the data directory, so `--remove` can undo exactly
that.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lazy_memory.adapters.claude_code_setup import (
    APPROVAL_KEY,
    AUTO_MEMORY_KEY,
    REJECTION_KEY,
    SERVER_NAME,
    Invocation,
    JsonObject,
    UnexpectedShape,
    auto_memory_is_off,
    install_approval,
    install_hook,
    install_server,
    is_rejected,
    lazy_hook_commands,
    remove_approval,
    remove_hook,
    remove_server,
    restore_auto_memory,
    turn_auto_memory_off,
)
from lazy_memory.engine.errors import InvalidConfig

SETTINGS = Path(".claude") / "settings.json"
"""The project's shared settings: the hook and autoMemoryEnabled go here."""
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
"""The user's own settings for the project: Claude Code honours a `.mcp.json` approval only
here or in user settings, never from the shared file a repository brings along."""
MCP = Path(".mcp.json")
NOTE_FILE = "claude-code-setup.json"


@dataclass
class FileChange:
    """One file of the plan: its JSON object before and after (None: no such file)."""

    path: Path
    before: JsonObject | None
    after: JsonObject | None

    @property
    def status(self) -> str:
        """created, changed, unchanged or deleted."""
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "created"
        return "deleted" if self.after is None else "changed"


@dataclass
class Plan:
    """What a set-up or a removal writes, with one human line per change."""

    root: Path
    files: list[FileChange]
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    """What happened to each of lazy's entries (hook, mcp_server, approval, auto_memory)."""

    @property
    def changed(self) -> bool:
        """Whether applying the plan writes anything."""
        return any(change.status != "unchanged" for change in self.files)


def read_object(path: Path) -> JsonObject | None:
    """The JSON object in path, None if there is no file; InvalidConfig for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidConfig(f"cannot read {path}: {error}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidConfig(f"{path} is not valid JSON ({error}); left as it is") from None
    if not isinstance(value, dict):
        raise InvalidConfig(f"{path} does not hold a JSON object; left as it is")
    return value


def write_object(path: Path, value: JsonObject) -> None:
    """Write value as 2-space-indented JSON atomically, keeping the file's mode."""
    target = Path(os.path.realpath(path))  # a symlinked settings file stays a symlink
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, as any editor would make it
    temporary = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def apply(plan: Plan) -> None:
    """Write, or delete, every file the plan changes."""
    for change in plan.files:
        if change.status in ("created", "changed") and change.after is not None:
            write_object(change.path, change.after)
        elif change.status == "deleted":
            change.path.unlink(missing_ok=True)


def is_set_up(root: Path) -> bool:
    """Whether the project's settings already hold lazy's SessionStart hook."""
    settings = read_object(root / SETTINGS)
    return settings is not None and bool(lazy_hook_commands(settings))


def auto_memory_setting(root: Path) -> object:
    """autoMemoryEnabled as the project's settings hold it (None when unset)."""
    settings = read_object(root / SETTINGS) or {}
    return settings.get(AUTO_MEMORY_KEY)


def plan_install(
    root: Path,
    invocation: Invocation,
    data_dir: Path,
    *,
    auto_memory_off: bool,
    record: JsonObject,
) -> Plan:
    """The set-up as the files are now: hook, MCP server, its approval, maybe auto memory off.

    record gains what the set-up creates or replaces (for the note that --remove reads).
    """
    settings, local, mcp = (read_object(root / name) for name in (SETTINGS, LOCAL_SETTINGS, MCP))
    command = invocation.hook_command()
    server = invocation.mcp_server(str(data_dir))
    for name, before in ((SETTINGS, settings), (LOCAL_SETTINGS, local), (MCP, mcp)):
        if before is None:
            record[_file_key(name)] = True
    if not (root / ".claude").exists():
        record["claude_dir"] = True

    new_settings = _edit(root, SETTINGS, settings, lambda s: install_hook(s, command, record))
    if auto_memory_off:
        new_settings = turn_auto_memory_off(new_settings, record)
    new_local = _edit(root, LOCAL_SETTINGS, local, lambda s: install_approval(s, record))
    new_mcp = _edit(root, MCP, mcp, lambda s: install_server(s, server, record))
    plan = Plan(
        root,
        [
            FileChange(root / SETTINGS, settings, new_settings),
            FileChange(root / LOCAL_SETTINGS, local, new_local),
            FileChange(root / MCP, mcp, new_mcp),
        ],
    )
    old_commands = lazy_hook_commands(settings or {})
    plan.facts["hook"] = "unchanged"
    if not old_commands:
        plan.facts["hook"] = "added"
        plan.lines.append(f"Added the SessionStart hook `{command}` to {SETTINGS}.")
    elif old_commands != lazy_hook_commands(new_settings):
        plan.facts["hook"] = "updated"
        plan.lines.append(f"Updated the SessionStart hook in {SETTINGS} to `{command}`.")
    old_server = _lazy_server(mcp or {})
    started = shlex.join([server["command"], *server["args"]])
    plan.facts["mcp_server"] = "unchanged"
    if old_server is None:
        plan.facts["mcp_server"] = "added"
        plan.lines.append(f"Added the MCP server {SERVER_NAME} (`{started}`) to {MCP}.")
    elif old_server != server:
        plan.facts["mcp_server"] = "updated"
        plan.lines.append(f"Updated the MCP server {SERVER_NAME} in {MCP} (`{started}`).")
    plan.facts["approval"] = "unchanged"
    if new_local != local:
        plan.facts["approval"] = "added"
        plan.lines.append(
            f"Approved the {SERVER_NAME} MCP server for you in {LOCAL_SETTINGS} (keep that file "
            "out of git: Claude Code ignores an approval in a committed one)."
        )
    plan.facts["auto_memory"] = "off" if auto_memory_is_off(settings or {}) else "unchanged"
    if auto_memory_off and not auto_memory_is_off(settings or {}):
        plan.facts["auto_memory"] = "turned_off"
        plan.lines.append(
            f"Turned Claude Code's own auto memory off in {SETTINGS} ({AUTO_MEMORY_KEY}: false)."
        )
    if is_rejected(new_local):
        plan.warnings.append(
            f"{SERVER_NAME} is listed in {REJECTION_KEY} in {LOCAL_SETTINGS}, so Claude Code "
            "will not start it: take it out of that list (left as you set it)."
        )
    return plan


def plan_remove(root: Path, record: JsonObject | None) -> Plan:
    """Undo a set-up: lazy's entries out, what they replaced put back, its emptied files gone."""
    settings, local, mcp = (read_object(root / name) for name in (SETTINGS, LOCAL_SETTINGS, MCP))
    plan = Plan(root, [])
    plan.facts = {"hook": "absent", "mcp_server": "absent", "approval": "absent"}
    plan.facts["auto_memory"] = "unchanged"
    if settings is not None:
        new_settings = restore_auto_memory(remove_hook(settings, record), record)
        plan.files.append(_removal(root, SETTINGS, settings, new_settings, record))
        if lazy_hook_commands(settings):
            plan.facts["hook"] = "removed"
            plan.lines.append(f"Removed the SessionStart hook from {SETTINGS}.")
        if settings.get(AUTO_MEMORY_KEY) != new_settings.get(AUTO_MEMORY_KEY):
            plan.facts["auto_memory"] = "restored"
            plan.lines.append(f"Put {AUTO_MEMORY_KEY} back as it was before lazy in {SETTINGS}.")
        elif auto_memory_is_off(settings):
            plan.warnings.append(
                f"{AUTO_MEMORY_KEY}: false in {SETTINGS} is left as it is: lazy did not set it."
            )
    if local is not None:
        new_local = remove_approval(local, record)
        plan.files.append(_removal(root, LOCAL_SETTINGS, local, new_local, record))
        if new_local != local:
            plan.facts["approval"] = "removed"
            plan.lines.append(f"Removed lazy's approval of its MCP server from {LOCAL_SETTINGS}.")
        elif SERVER_NAME in (local.get(APPROVAL_KEY) or []):
            plan.facts["approval"] = "kept"
            plan.warnings.append(
                f"{SERVER_NAME} in {APPROVAL_KEY} in {LOCAL_SETTINGS} is left as it is: lazy has "
                "no note of adding it (it may be your answer to Claude Code's prompt)."
            )
    if mcp is not None:
        new_mcp = remove_server(mcp, record)
        plan.files.append(_removal(root, MCP, mcp, new_mcp, record))
        before, after = (_lazy_server(value) for value in (mcp, new_mcp))
        if before is not None and after is None:
            plan.facts["mcp_server"] = "removed"
            plan.lines.append(f"Removed the MCP server {SERVER_NAME} from {MCP}.")
        elif before != after:
            plan.facts["mcp_server"] = "restored"
            plan.lines.append(f"Put back the MCP server {SERVER_NAME} in {MCP} as it was.")
        elif before is not None:
            plan.facts["mcp_server"] = "kept"
            plan.warnings.append(
                f"The MCP server {SERVER_NAME} in {MCP} is left as it is: lazy did not write it."
            )
    for change in plan.files:
        if change.status == "deleted":
            plan.lines.append(f"Deleted {change.path.relative_to(root)}: lazy had created it.")
    return plan


def remove_empty_claude_folder(root: Path, record: JsonObject | None) -> bool:
    """Remove `.claude/` if lazy created it and nothing is left in it."""
    if record is None or not record.get("claude_dir"):
        return False
    try:
        (root / ".claude").rmdir()
    except OSError:  # not empty, or gone already: either way not lazy's to remove
        return False
    return True


class Note:
    """What each set-up created or replaced, per project root, in the data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / NOTE_FILE

    def record(self, root: Path) -> JsonObject | None:
        """The record of the set-up at root, None if there is none."""
        record = self._projects().get(str(root))
        return record if isinstance(record, dict) else None

    def save(self, root: Path, record: JsonObject | None) -> None:
        """Keep record for root (None or empty: forget it); the file goes with the last one."""
        projects = self._projects()
        if record:
            projects[str(root)] = record
        else:
            projects.pop(str(root), None)
        if projects:
            write_object(self.path, {"version": 1, "projects": projects})
        else:
            self.path.unlink(missing_ok=True)

    def _projects(self) -> JsonObject:
        try:
            note = read_object(self.path)
        except InvalidConfig:
            return {}  # lazy's own note, unreadable: removal then infers, as with no note
        projects = (note or {}).get("projects")
        return projects if isinstance(projects, dict) else {}


def _edit(
    root: Path,
    name: Path,
    before: JsonObject | None,
    edit: Callable[[JsonObject], JsonObject],
) -> JsonObject:
    try:
        return edit(before or {})
    except UnexpectedShape as error:
        raise InvalidConfig(f"{root / name}: {error}; left as it is") from None


def _removal(
    root: Path, name: Path, before: JsonObject, after: JsonObject, record: JsonObject | None
) -> FileChange:
    if after == {} and before != {} and record is not None and record.get(_file_key(name)):
        return FileChange(root / name, before, None)
    return FileChange(root / name, before, after)


def _lazy_server(mcp: JsonObject) -> object:
    servers = mcp.get("mcpServers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _file_key(name: Path) -> str:
    return {SETTINGS: "settings_file", LOCAL_SETTINGS: "local_settings_file", MCP: "mcp_file"}[name]
