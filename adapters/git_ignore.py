"""Keeping `.claude/settings.local.json` out of git: asked of git itself, written beside it.

The local settings hold the user's own approval of lazy's MCP server, which Claude Code
ignores in a committed file; `git add -A` must never stage it. If git already ignores it
(any rule: a .gitignore, .git/info/exclude, the user's global excludes), nothing is added;
otherwise one line goes into `.claude/.gitignore`, a file committed with `.claude/settings.json`
that ignores the local settings for every clone. A file git already tracks stays tracked
whatever is ignored: that is said, never undone here.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILE = Path(".claude") / ".gitignore"
IGNORE_LINE = "/settings.local.json"
"""The pattern, relative to `.claude/`: only the folder's own settings.local.json."""
_GIT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class IgnoreStatus:
    """What git makes of a path: whether there is a repository, and who ignores or tracks it."""

    repository: bool
    ignored_by: str | None = None
    """The ignore file and line that ignore the path (as git names them), None if none does."""
    tracked: bool = False
    checked: bool = True
    """False when git could not be asked (not installed, or it failed): nothing is known."""


def ignore_status(root: Path, path: Path) -> IgnoreStatus:
    """What git at root makes of path (relative to root)."""
    if not (root / ".git").exists():
        return IgnoreStatus(repository=False)
    try:
        checked = _git(root, "check-ignore", "--verbose", "--no-index", "--", str(path))
        tracked = _git(root, "ls-files", "--error-unmatch", "--", str(path))
    except (OSError, subprocess.SubprocessError):
        return IgnoreStatus(repository=True, checked=False)
    if "not a git repository" in checked.stderr:
        return IgnoreStatus(repository=False)  # a `.git` that is not one: nothing to keep out
    if checked.returncode not in (0, 1) or tracked.returncode not in (0, 1):
        return IgnoreStatus(repository=True, checked=False)
    return IgnoreStatus(
        repository=True,
        ignored_by=_ignoring_rule(checked.stdout) if checked.returncode == 0 else None,
        tracked=tracked.returncode == 0,
    )


def with_line(text: str | None, line: str) -> str:
    """An ignore file's text with line added at the end (on a line of its own)."""
    if text is None:
        return line + "\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    separator = "" if not text or text.endswith("\n") else newline
    return f"{text}{separator}{line}{newline}"


def without_line(text: str, line: str) -> str:
    """An ignore file's text without the lines that are exactly line."""
    kept = [each for each in text.splitlines(keepends=True) if each.rstrip("\r\n") != line]
    return "".join(kept)


def _ignoring_rule(output: str) -> str | None:
    """`SOURCE:LINE:PATTERN<TAB>PATH` from check-ignore --verbose; None for a `!` pattern."""
    rule = output.split("\t", 1)[0]
    source, _, rest = rule.partition(":")
    number, _, pattern = rest.partition(":")
    if pattern.startswith("!"):
        return None
    return f"{source} (line {number}: {pattern})"


def _git(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *arguments],
        capture_output=True,
        text=True,
        timeout=_GIT_TIMEOUT_SECONDS,
        stdin=subprocess.DEVNULL,
        check=False,
    )
