"""The plan of a `lazy init --claude-code` and of its `--remove`, before anything is written.

A set-up reads `.claude/settings.json`, `.claude/settings.local.json`, `.mcp.json` and
`.claude/.gitignore`, applies setup.py's edits, and says per file what it would
write, spliced into the file's own text so the rest stays byte-identical; it notes in the
record what each file held before lazy (note.py). A removal puts back each file
still as lazy left it byte for byte, takes lazy's entries out of one edited since, and
deletes what the set-up created.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lazy_memory.adapters.claude_code.files import (
    LOCAL_SETTINGS,
    MCP,
    SETTINGS,
    Document,
    FileChange,
    Plan,
    read_document,
    read_text,
)
from lazy_memory.adapters.claude_code.note import edited_since, note_written, original_text
from lazy_memory.adapters.claude_code.setup import (
    APPROVAL_KEY,
    AUTO_MEMORY_KEY,
    HOOK_EVENT,
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
    lazy_hook_matchers,
    misses_sources,
    remove_approval,
    remove_hook,
    remove_server,
    restore_auto_memory,
    turn_auto_memory_off,
)
from lazy_memory.adapters.git_ignore import (
    IGNORE_FILE,
    IGNORE_LINE,
    IgnoreStatus,
    with_line,
    without_line,
)
from lazy_memory.adapters.json_text import new_text, rewrite
from lazy_memory.engine.errors import InvalidConfig

JSON_FILES = (SETTINGS, LOCAL_SETTINGS, MCP)
_FILE_KEYS = {
    SETTINGS: "settings_file",
    LOCAL_SETTINGS: "local_settings_file",
    MCP: "mcp_file",
    IGNORE_FILE: "ignore_file",
}
"""The record's key for `lazy created this file`."""


@dataclass(frozen=True)
class SetUp:
    """What a set-up writes: how Claude Code starts lazy, the hook's bound, its log's folder."""

    invocation: Invocation
    bound: int
    """Seconds the hook command lets lazy run (hook.py command_bound)."""
    log_dir: str
    """The launch log's folder when LAZY_DATA is unset, relative to the root if inside it."""
    keep_auto_memory: bool = False


def plan_install(root: Path, setup: SetUp, record: JsonObject, ignore: IgnoreStatus) -> Plan:
    """The set-up as the files are now; record gains what it creates or replaces."""
    documents = {name: read_document(root / name) for name in JSON_FILES}
    ignore_text = read_text(root / IGNORE_FILE)
    noted = _copy(record) or None
    if not (root / ".claude").exists():
        record["claude_dir"] = True
    for name, document in documents.items():
        if document.text is None:
            record[_FILE_KEYS[name]] = True
    command = setup.invocation.hook_command(setup.bound, setup.log_dir)
    server = setup.invocation.mcp_server()

    def settings_edit(settings: JsonObject) -> JsonObject:
        new = install_hook(settings, command, setup.bound, record)
        if setup.keep_auto_memory:
            new = restore_auto_memory(new, record)
            record.pop("auto_memory", None)
            return new
        return turn_auto_memory_off(new, record)

    edits: dict[Path, Callable[[JsonObject], JsonObject]] = {
        SETTINGS: settings_edit,
        LOCAL_SETTINGS: lambda local: install_approval(local, record),
        MCP: lambda mcp: install_server(mcp, server, record),
    }
    values = {name: _edit(root, name, documents[name], edits[name]) for name in JSON_FILES}
    plan = Plan(root)
    for name in JSON_FILES:
        after = _text(documents[name], values[name])
        before = documents[name].value
        # Nothing of lazy's in it, noted or recognisable: the text to put back on --remove.
        pristine = all(_removed(name, before, known) == before for known in (noted, None))
        note_written(record, name, documents[name].text, after, pristine=pristine)
        plan.files.append(FileChange(root / name, documents[name].text, after))
    ignore_after = _ignore_after(ignore_text, ignore, record)
    pristine = not ((noted or {}).get("ignore_line") and IGNORE_LINE in _lines(ignore_text))
    note_written(record, IGNORE_FILE, ignore_text, ignore_after, pristine=pristine)
    ignore_change = FileChange(root / IGNORE_FILE, ignore_text, ignore_after)
    plan.files.append(ignore_change)
    _describe_install(plan, documents, values, server)
    _describe_ignore(plan, ignore, ignore_change)
    return plan


def plan_remove(root: Path, record: JsonObject | None) -> Plan:
    """Undo a set-up: each file put back, or lazy's entries taken out; its new files gone."""
    plan = Plan(root)
    plan.facts = {"hook": "absent", "mcp_server": "absent", "approval": "absent"}
    plan.facts["auto_memory"] = "unchanged"
    documents = {name: read_document(root / name) for name in JSON_FILES}
    for name, document in documents.items():
        if document.text is None:
            continue
        exact, original = original_text(record, name, document.text)
        if exact:
            after = original
        else:
            value = _removed(name, document.value, record)
            deleted = value == {} and document.value != {} and _created(record, name)
            after = None if deleted else _text(document, value)
        _warn_edited(plan, record, name, document.text, after)
        plan.files.append(FileChange(root / name, document.text, after))
    ignore_text = read_text(root / IGNORE_FILE)
    if ignore_text is not None:
        exact, original = original_text(record, IGNORE_FILE, ignore_text)
        if exact:
            after = original
        elif record is not None and record.get("ignore_line"):
            after = without_line(ignore_text, IGNORE_LINE)
            after = None if not after and _created(record, IGNORE_FILE) else after
        else:
            after = ignore_text
        _warn_edited(plan, record, IGNORE_FILE, ignore_text, after)
        plan.files.append(FileChange(root / IGNORE_FILE, ignore_text, after))
    _describe_removal(plan, documents)
    return plan


def _removed(name: Path, value: JsonObject | None, record: JsonObject | None) -> JsonObject | None:
    """value without lazy's entries (as record tells, or as far as they can be recognised)."""
    if value is None:
        return None
    if name == SETTINGS:
        return restore_auto_memory(remove_hook(value, record), record)
    if name == LOCAL_SETTINGS:
        return remove_approval(value, record)
    return remove_server(value, record)


def _ignore_after(text: str | None, ignore: IgnoreStatus, record: JsonObject) -> str | None:
    """`.claude/.gitignore` with lazy's line when git does not ignore the local settings yet."""
    if not ignore.repository or ignore.ignored_by is not None or IGNORE_LINE in _lines(text):
        return text
    if text is None:
        record[_FILE_KEYS[IGNORE_FILE]] = True
    record["ignore_line"] = True
    return with_line(text, IGNORE_LINE)


def _describe_install(
    plan: Plan,
    documents: dict[Path, Document],
    values: dict[Path, JsonObject],
    server: JsonObject,
) -> None:
    settings, local, mcp = (documents[name].value or {} for name in JSON_FILES)
    new_settings, new_local, new_mcp = (values[name] for name in JSON_FILES)
    old_commands = lazy_hook_commands(settings)
    plan.facts["hook"] = "unchanged"
    if not old_commands:
        plan.facts["hook"] = "added"
        plan.lines.append(f"Added lazy's SessionStart hook to {SETTINGS} (every source).")
    elif _hook_entries(settings) != _hook_entries(new_settings):
        plan.facts["hook"] = "updated"
        plan.lines.append(f"Updated lazy's SessionStart hook in {SETTINGS} (every source).")
    for matcher in lazy_hook_matchers(new_settings):
        if misses_sources(matcher):
            plan.warnings.append(
                f"lazy's hook in {SETTINGS} has the matcher {matcher!r}, left as you set it: "
                "sessions that start otherwise get no memory section. Remove the matcher to "
                "fire it on every start."
            )
    old_server = _lazy_server(mcp)
    started = shlex.join([server["command"], *server["args"]])
    plan.facts["mcp_server"] = "unchanged"
    if old_server is None:
        plan.facts["mcp_server"] = "added"
        plan.lines.append(
            f"Added the MCP server {SERVER_NAME} (`{started}`, always loaded) to {MCP}."
        )
    elif old_server != _lazy_server(new_mcp):
        plan.facts["mcp_server"] = "updated"
        plan.lines.append(
            f"Updated the MCP server {SERVER_NAME} in {MCP} (`{started}`, always loaded)."
        )
    plan.facts["approval"] = "unchanged"
    if new_local != local:
        plan.facts["approval"] = "added"
        plan.lines.append(f"Approved the {SERVER_NAME} MCP server for you in {LOCAL_SETTINGS}.")
    if is_rejected(new_local):
        plan.warnings.append(
            f"{SERVER_NAME} is listed in {REJECTION_KEY} in {LOCAL_SETTINGS}, so Claude Code "
            "will not start it: take it out of that list (left as you set it)."
        )
    _describe_auto_memory(plan, settings, new_settings)


def _describe_auto_memory(plan: Plan, settings: JsonObject, new_settings: JsonObject) -> None:
    if settings.get(AUTO_MEMORY_KEY) == new_settings.get(AUTO_MEMORY_KEY):
        plan.facts["auto_memory"] = "already_off" if auto_memory_is_off(settings) else "kept"
    elif auto_memory_is_off(new_settings):
        plan.facts["auto_memory"] = "turned_off"
        plan.lines.append(
            f"Turned Claude Code's own auto memory off in {SETTINGS} ({AUTO_MEMORY_KEY}: "
            "false): lazy's memory is the session's one instruction about memory."
        )
    else:
        plan.facts["auto_memory"] = "restored"
        plan.lines.append(f"Put {AUTO_MEMORY_KEY} back as it was before lazy in {SETTINGS}.")


def _describe_ignore(plan: Plan, ignore: IgnoreStatus, change: FileChange) -> None:
    if not ignore.repository:
        plan.facts["ignored"] = "no_repository"
        return
    if change.status != "unchanged":
        plan.facts["ignored"] = "added"
        plan.lines.append(
            f"Ignored {LOCAL_SETTINGS} in git through {IGNORE_FILE} (`{IGNORE_LINE}`): your "
            "approval stays yours."
        )
    else:
        plan.facts["ignored"] = "already"  # by the user's rule, or lazy's from an earlier run
    if ignore.tracked:
        plan.warnings.append(
            f"{LOCAL_SETTINGS} is tracked by git, so ignoring it changes nothing: untrack it "
            f"with `git rm --cached {LOCAL_SETTINGS}` (Claude Code ignores an approval in a "
            "committed file)."
        )
    if not ignore.checked:
        plan.warnings.append(
            f"git could not be asked whether it ignores {LOCAL_SETTINGS}; {IGNORE_FILE} "
            "ignores it now."
        )


def _describe_removal(plan: Plan, documents: dict[Path, Document]) -> None:
    after = {change.path.relative_to(plan.root): change.after for change in plan.files}
    settings, local, mcp = (documents[name].value for name in JSON_FILES)
    new_settings, new_local, new_mcp = (read_value(after.get(name)) for name in JSON_FILES)
    if settings is not None:
        if lazy_hook_commands(settings):
            plan.facts["hook"] = "removed"
            plan.lines.append(f"Removed lazy's SessionStart hook from {SETTINGS}.")
        if settings.get(AUTO_MEMORY_KEY) != (new_settings or {}).get(AUTO_MEMORY_KEY):
            plan.facts["auto_memory"] = "restored"
            plan.lines.append(f"Put {AUTO_MEMORY_KEY} back as it was before lazy in {SETTINGS}.")
        elif auto_memory_is_off(settings):
            plan.warnings.append(
                f"{AUTO_MEMORY_KEY}: false in {SETTINGS} is left as it is: lazy did not set it."
            )
    if local is not None:
        if new_local != local and SERVER_NAME in (local.get(APPROVAL_KEY) or []):
            plan.facts["approval"] = "removed"
            plan.lines.append(f"Removed lazy's approval of its MCP server from {LOCAL_SETTINGS}.")
        elif SERVER_NAME in (local.get(APPROVAL_KEY) or []):
            plan.facts["approval"] = "kept"
            plan.warnings.append(
                f"{SERVER_NAME} in {APPROVAL_KEY} in {LOCAL_SETTINGS} is left as it is: lazy has "
                "no note of adding it (it may be your answer to Claude Code's prompt)."
            )
    if mcp is not None:
        before_server, after_server = _lazy_server(mcp), _lazy_server(new_mcp or {})
        if before_server is not None and after_server is None:
            plan.facts["mcp_server"] = "removed"
            plan.lines.append(f"Removed the MCP server {SERVER_NAME} from {MCP}.")
        elif before_server != after_server:
            plan.facts["mcp_server"] = "restored"
            plan.lines.append(f"Put back the MCP server {SERVER_NAME} in {MCP} as it was.")
        elif before_server is not None:
            plan.facts["mcp_server"] = "kept"
            plan.warnings.append(
                f"The MCP server {SERVER_NAME} in {MCP} is left as it is: lazy did not write it."
            )
    for change in plan.files:
        name = change.path.relative_to(plan.root)
        if change.status == "deleted":
            plan.lines.append(f"Deleted {name}: lazy had created it.")
        elif change.path.name == IGNORE_FILE.name and change.status == "changed":
            plan.lines.append(f"Took lazy's line out of {IGNORE_FILE}.")


def _warn_edited(
    plan: Plan, record: JsonObject | None, name: Path, before: str, after: str | None
) -> None:
    if before != after and edited_since(record, name, before):
        plan.warnings.append(
            f"{name} was changed after lazy wrote it: lazy's entries are taken out and your "
            "changes stay."
        )


def read_value(text: str | None) -> JsonObject | None:
    """The JSON object of a text lazy planned (valid by construction); None for no file."""
    if text is None:
        return None
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def _edit(
    root: Path, name: Path, document: Document, edit: Callable[[JsonObject], JsonObject]
) -> JsonObject:
    try:
        return edit(_copy(document.value or {}))
    except UnexpectedShape as error:
        raise InvalidConfig(f"{root / name}: {error}; left as it is") from None


def _text(document: Document, value: JsonObject | None) -> str | None:
    """The file's text once it holds value: spliced into its own text, or a new file's."""
    if value is None or (document.text is None and value == {}):
        return document.text
    if document.text is None:
        return new_text(value)
    return rewrite(document.text, value)


def _hook_entries(settings: JsonObject) -> object:
    hooks = settings.get("hooks")
    return hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None


def _lazy_server(mcp: JsonObject) -> object:
    servers = mcp.get("mcpServers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def _lines(text: str | None) -> list[str]:
    return [] if text is None else [line.rstrip("\r") for line in text.split("\n")]


def _created(record: JsonObject | None, name: Path) -> bool:
    return record is not None and bool(record.get(_FILE_KEYS[name]))


def _copy(value: JsonObject | None) -> JsonObject:
    return copy.deepcopy(value or {})
