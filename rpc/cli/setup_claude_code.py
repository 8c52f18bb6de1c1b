"""`lazy init --claude-code` and `--remove`: wire a repository for Claude Code, or unwire it.

The set-up writes the SessionStart hook, the MCP server and its approval, keeps the local
settings out of git, and turns Claude Code's own auto memory off unless told to keep it
(`--keep-auto-memory`): one instruction about memory per session. `Answers` says how offers
are answered and `Report` collects what a run did, printed as it goes or as one JSON object at
the end; plain `lazy init` uses both too.
"""

from __future__ import annotations

import copy
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lazy_memory.adapters.claude_code.files import (
    LOCAL_SETTINGS,
    MCP,
    SETTINGS,
    Plan,
    apply,
    auto_memory_setting,
    is_set_up,
    remove_empty_claude_folder,
)
from lazy_memory.adapters.claude_code.hook import claude_code_timeout, command_bound
from lazy_memory.adapters.claude_code.note import Note
from lazy_memory.adapters.claude_code.plan import SetUp, plan_install, plan_remove
from lazy_memory.adapters.claude_code.setup import (
    AUTO_MEMORY_KEY,
    HOOK_EVENT,
    SERVER_NAME,
    current_invocation,
)
from lazy_memory.adapters.config import Settings, load_settings
from lazy_memory.adapters.git_ignore import IGNORE_FILE, IgnoreStatus, ignore_status
from lazy_memory.engine.errors import InvalidConfig
from lazy_memory.rpc.cli.common import print_json

SETUP_HINT = (
    "run `lazy init --claude-code` to give Claude Code sessions this store (a SessionStart "
    "hook and the MCP server)"
)
CHECK_LINE = (
    "Check: `claude mcp list` lists lazy as connected; in a Claude Code session, /hooks shows "
    "the SessionStart hook."
)


@dataclass(frozen=True)
class Answers:
    """How this run answers an offer: yes to all, by asking at the terminal, or not at all."""

    yes: bool
    interactive: bool


@dataclass
class Report:
    """What a `lazy init` run did: said line by line, or printed as one JSON object."""

    root: Path
    as_json: bool
    files: list[dict[str, str]] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    commit: list[str] = field(default_factory=list)
    """The files a team commits, relative to the root."""

    def say(self, line: str) -> None:
        """A line for the person at the terminal (JSON output leaves it out)."""
        if not self.as_json:
            print(line)

    def hint(self, line: str) -> None:
        """What to run later to do what this run did not."""
        self.hints.append(line)
        self.say(line)

    def warn(self, line: str) -> None:
        """Something the user must fix themselves."""
        self.warnings.append(line)
        if not self.as_json:
            print(f"lazy: warning: {line}", file=sys.stderr)

    def file(self, path: Path, status: str) -> None:
        """One file the run created, changed, deleted or left unchanged."""
        self.files.append({"path": str(path), "status": status})

    @property
    def changed(self) -> bool:
        """Whether the run wrote anything."""
        return any(entry["status"] != "unchanged" for entry in self.files)

    def finish(self) -> None:
        """Say which files to commit; print the JSON object (JSON output only)."""
        if self.commit:
            self.say(f"Commit {_listed(self.commit)}.")
        if self.as_json:
            print_json(
                {
                    "root": str(self.root),
                    "changed": self.changed,
                    "files": self.files,
                    **self.fields,
                    "commit": self.commit,
                    "hints": self.hints,
                    "warnings": self.warnings,
                }
            )


def check_files(root: Path, settings: Settings) -> None:
    """Refuse (InvalidConfig) before anything is written if a file cannot be merged into."""
    plan_install(root, _set_up_of(root, settings, False), {}, IgnoreStatus(repository=False))


def offer_setup(root: Path, answers: Answers, report: Report) -> bool:
    """Plain `lazy init`: whether to wire Claude Code too, when it looks in use here."""
    if not ((root / ".claude").is_dir() or shutil.which("claude")):
        return False
    try:
        if is_set_up(root):
            return False
    except InvalidConfig:
        pass  # a broken settings file: offered all the same, and refused if accepted
    if answers.interactive and not answers.yes:
        question = (
            "\nSet this repository up for Claude Code too (a SessionStart hook in "
            f"{SETTINGS}, the MCP server in .mcp.json)? [y/N] "
        )
        if ask(question):
            return True
    report.hint(f"Claude Code: {SETUP_HINT}.")
    return False


def set_up(root: Path, settings: Settings, report: Report, *, keep_auto_memory: bool) -> None:
    """Write the hook, the MCP server and its approval, the git ignore rule, auto memory off."""
    setup = _set_up_of(root, settings, keep_auto_memory)
    note = Note(settings.data_dir)
    record = copy.deepcopy(note.record(root) or {})
    ignore = ignore_status(root, LOCAL_SETTINGS)
    plan = plan_install(root, setup, record, ignore)
    # Noted before the files change: a run stopped half-way can still be undone.
    note.save(root, record)
    _write(plan, report)
    report.fields["hook"] = {
        "event": HOOK_EVENT,
        "command": setup.invocation.hook_command(setup.bound, setup.log_dir),
        "timeout": claude_code_timeout(setup.bound),
        "status": plan.facts["hook"],
    }
    report.fields["mcp_server"] = {
        "name": SERVER_NAME,
        **setup.invocation.mcp_server(),
        "status": plan.facts["mcp_server"],
        "approval": plan.facts["approval"],
    }
    status = plan.facts["auto_memory"]
    report.fields["auto_memory"] = {
        "status": status,
        "off": status in ("turned_off", "already_off"),
    }
    report.fields["ignore"] = {
        "path": str(LOCAL_SETTINGS),
        "status": plan.facts["ignored"],
        "by": _ignored_by(plan.facts["ignored"], ignore),
    }
    _check_local_auto_memory(root, report, keep_auto_memory)
    if not setup.invocation.portable:
        report.warn(
            f"the hook and the MCP server start lazy as `{' '.join(setup.invocation.words)}`, "
            "a path of this machine: before committing them, put lazy on the PATH (pipx "
            "install lazy-memory, or activate its environment) and run this again to write "
            "`lazy`."
        )
    committed = [str(SETTINGS), str(MCP)]
    if (root / IGNORE_FILE).exists():
        committed.append(str(IGNORE_FILE))
    report.commit.extend(name for name in committed if name not in report.commit)
    if not report.changed:
        report.say("Claude Code is already set up for this repository; nothing changed.")
    report.say(CHECK_LINE)


def remove(root: Path, data_dir: Path, report: Report) -> None:
    """Take out exactly what set_up added, as far as the note (or inference) tells."""
    note = Note(data_dir)
    record = note.record(root)
    plan = plan_remove(root, record)
    _write(plan, report)
    if plan.changed and remove_empty_claude_folder(root, record):
        report.file(root / ".claude", "deleted")
        report.say("Deleted .claude/: lazy had created it and it is empty now.")
    if record is not None:
        note.save(root, None)
    report.fields["removed"] = plan.facts
    if not plan.changed:
        report.say("lazy's Claude Code set-up is not in this repository; nothing to remove.")


def ask(question: str) -> bool:
    """A yes/no question at the terminal; no answer (end of input) is a no."""
    try:
        answer = input(question)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _set_up_of(root: Path, settings: Settings, keep_auto_memory: bool) -> SetUp:
    return SetUp(
        current_invocation(),
        bound=command_bound(settings.hook_timeout_seconds),
        log_dir=_log_dir(root),
        keep_auto_memory=keep_auto_memory,
    )


def _log_dir(root: Path) -> str:
    """Where the launch log is when LAZY_DATA is unset (lazy.toml's data_dir, else .lazy),
    relative to the root when inside it: Claude Code runs project hooks there."""
    environ = {name: value for name, value in os.environ.items() if name != "LAZY_DATA"}
    data_dir = load_settings(root, environ).data_dir
    try:
        return str(data_dir.relative_to(root))
    except ValueError:
        return str(data_dir)


def _ignored_by(status: str, ignore: IgnoreStatus) -> str | None:
    """What keeps the local settings out of git: lazy's line, or the user's own rule."""
    if status == "no_repository":
        return None
    return ignore.ignored_by if status == "already" and ignore.ignored_by else str(IGNORE_FILE)


def _check_local_auto_memory(root: Path, report: Report, keep_auto_memory: bool) -> None:
    """Local settings override the project's: a `true` there brings the second instruction back."""
    if keep_auto_memory:
        return
    try:
        local = auto_memory_setting(root, LOCAL_SETTINGS)
    except InvalidConfig:
        return
    if local is True:
        report.warn(
            f"{LOCAL_SETTINGS} sets {AUTO_MEMORY_KEY}: true, which overrides the project's "
            "false for you: take it out there, or sessions get two instructions about memory."
        )


def _write(plan: Plan, report: Report) -> None:
    apply(plan)
    for change in plan.files:
        if change.before is not None or change.after is not None:
            report.file(change.path, change.status)
    for line in plan.lines:
        report.say(line)
    for warning in plan.warnings:
        report.warn(warning)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
