"""`lazy init --claude-code` and `--remove`: wire a repository for Claude Code, or unwire it.

The set-up writes the SessionStart hook and the MCP server (asked for by the flag itself), then
offers to turn Claude Code's own auto memory off. `Answers` says how offers are answered and
`Report` collects what a run did, printed as it goes or as one JSON object at the end; plain
`lazy init` uses both too.
"""

from __future__ import annotations

import copy
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lazy_memory.adapters.claude_code_files import (
    SETTINGS,
    Note,
    Plan,
    apply,
    auto_memory_setting,
    is_set_up,
    plan_install,
    plan_remove,
    remove_empty_claude_folder,
)
from lazy_memory.adapters.claude_code_setup import (
    HOOK_EVENT,
    HOOK_MATCHER,
    HOOK_TIMEOUT_SECONDS,
    SERVER_NAME,
    Invocation,
    JsonObject,
    running_invocation,
)
from lazy_memory.engine.errors import InvalidConfig
from lazy_memory.rpc.cli.common import print_json

AUTO_MEMORY_HINT = "run `lazy init --claude-code --auto-memory-off` to turn it off"
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
        for entry in self.files:
            if entry["path"] == str(path):
                # A file written twice in one run (settings.json: hook, then auto memory).
                if entry["status"] == "unchanged" or status != "unchanged":
                    entry["status"] = "created" if entry["status"] == "created" else status
                return
        self.files.append({"path": str(path), "status": status})

    @property
    def changed(self) -> bool:
        """Whether the run wrote anything."""
        return any(entry["status"] != "unchanged" for entry in self.files)

    def finish(self) -> None:
        """Print the JSON object (JSON output only)."""
        if self.as_json:
            print_json(
                {
                    "root": str(self.root),
                    "changed": self.changed,
                    "files": self.files,
                    **self.fields,
                    "hints": self.hints,
                    "warnings": self.warnings,
                }
            )


def current_invocation() -> Invocation:
    """How Claude Code should start the lazy running now."""
    return running_invocation(sys.argv[0], shutil.which("lazy"), sys.executable)


def check_files(root: Path, data_dir: Path) -> None:
    """Refuse (InvalidConfig) before anything is written if a file cannot be merged into."""
    plan_install(root, current_invocation(), data_dir, auto_memory_off=False, record={})


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


def set_up(
    root: Path, data_dir: Path, answers: Answers, report: Report, *, auto_memory_off: bool
) -> None:
    """Write the hook, the MCP server and its approval, then offer auto memory off."""
    invocation = current_invocation()
    note = Note(data_dir)
    noted = note.record(root)
    record = copy.deepcopy(noted or {})
    plan = plan_install(root, invocation, data_dir, auto_memory_off=False, record=record)
    _write(plan, report)
    # Noted at once: a run stopped at the question below can still be undone exactly.
    noted = _keep(note, root, record, noted)
    report.fields["hook"] = {
        "event": HOOK_EVENT,
        "matcher": HOOK_MATCHER,
        "command": invocation.hook_command(),
        "timeout": HOOK_TIMEOUT_SECONDS,
        "status": plan.facts["hook"],
    }
    report.fields["mcp_server"] = {
        "name": SERVER_NAME,
        **invocation.mcp_server(str(data_dir)),
        "status": plan.facts["mcp_server"],
        "approval": plan.facts["approval"],
    }
    status = _auto_memory_answer(root, answers, report, flag=auto_memory_off)
    if status == "turned_off":
        # Re-planned from the files as they are now: the hook was written a moment ago.
        plan = plan_install(root, invocation, data_dir, auto_memory_off=True, record=record)
        _write(plan, report, warn=False)
        _keep(note, root, record, noted)
    report.fields["auto_memory"] = {"status": status, "turned_off": status == "turned_off"}
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


def _auto_memory_answer(root: Path, answers: Answers, report: Report, *, flag: bool) -> str:
    current = auto_memory_setting(root)
    if current is False:
        return "already_off"
    if flag or answers.yes:
        return "turned_off"
    if answers.interactive:
        already = f"{SETTINGS} sets autoMemoryEnabled: true. " if current is True else ""
        question = (
            f"\n{already}Turn Claude Code's own auto memory off for this project? lazy's "
            "memory takes its place. [y/N] "
        )
        if ask(question):
            return "turned_off"
        report.say(f"Claude Code's auto memory stays on; {AUTO_MEMORY_HINT}.")
        return "declined"
    report.hint(f"Claude Code's own auto memory is still on for this project; {AUTO_MEMORY_HINT}.")
    return "not_asked"


def _keep(note: Note, root: Path, record: JsonObject, noted: JsonObject | None) -> JsonObject:
    """Save record in the note if it says more than the note does; return what is noted."""
    if record != (noted or {}):
        note.save(root, record)
    return copy.deepcopy(record)


def _write(plan: Plan, report: Report, *, warn: bool = True) -> None:
    apply(plan)
    for change in plan.files:
        report.file(change.path, change.status)
    for line in plan.lines:
        report.say(line)
    for warning in plan.warnings if warn else []:
        report.warn(warning)
