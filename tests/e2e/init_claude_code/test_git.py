"""A set-up a team can commit, checked with real git: `git add -A` never stages the local
settings (ignored through `.claude/.gitignore`, or by the user's own rule, as the output says),
the output names the files to commit, and --remove leaves the repository as it was.

Each test gets its own HOME (no global git configuration), CLAUDE_CONFIG_DIR and LAZY_DATA,
and a real repository (conftest.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import users_files
from tests.e2e.init_claude_code.repository import git

LOCAL = ".claude/settings.local.json"
COMMIT = ["lazy.toml", ".claude/settings.json", ".mcp.json", ".claude/.gitignore"]


def staged_by_add_all(project: Path) -> list[str]:
    git(project, "add", "-A")
    return git(project, "diff", "--cached", "--name-only").split()


def test_add_all_stages_what_to_commit_and_never_the_local_settings(
    lazy: Lazy, project: Path
) -> None:
    done = lazy("init", "--claude-code", "--yes", "--json")

    report = json.loads(done.stdout)
    assert (project / LOCAL).exists()
    assert sorted(staged_by_add_all(project)) == sorted(COMMIT)
    assert report["commit"] == COMMIT
    assert report["ignore"] == {"path": LOCAL, "status": "added", "by": ".claude/.gitignore"}
    said = lazy("init", "--claude-code").stdout
    assert f"Commit {', '.join(COMMIT[:-1])} and {COMMIT[-1]}." in said


def test_a_rule_the_repository_already_has_is_used_and_named(lazy: Lazy, project: Path) -> None:
    (project / ".gitignore").write_text("node_modules/\n.claude/settings.local.json\n")
    (project / ".git" / "info").mkdir(exist_ok=True)

    report = json.loads(lazy("init", "--claude-code", "--yes", "--json").stdout)

    assert not (project / ".claude" / ".gitignore").exists()
    assert report["ignore"] == {
        "path": LOCAL,
        "status": "already",
        "by": ".gitignore (line 2: .claude/settings.local.json)",
    }
    assert ".claude/.gitignore" not in report["commit"]
    assert LOCAL not in staged_by_add_all(project)


def test_a_rule_in_info_exclude_counts_too(lazy: Lazy, project: Path) -> None:
    exclude = project / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("*.local.json\n")

    report = json.loads(lazy("init", "--claude-code", "--yes", "--json").stdout)

    assert report["ignore"]["by"] == ".git/info/exclude (line 1: *.local.json)"
    assert LOCAL not in staged_by_add_all(project)


def test_the_users_own_claude_gitignore_gets_one_line_and_gets_it_back_on_remove(
    lazy: Lazy, project: Path
) -> None:
    ignore = project / ".claude" / ".gitignore"
    ignore.parent.mkdir()
    ignore.write_bytes(b"agents/scratch/")  # no final newline

    lazy("init", "--claude-code", "--yes")
    added = ignore.read_bytes()
    lazy("init", "--claude-code", "--remove")

    assert added == b"agents/scratch/\n/settings.local.json\n"
    assert ignore.read_bytes() == b"agents/scratch/"


def test_local_settings_git_already_tracks_are_named_with_the_command_that_untracks_them(
    lazy: Lazy, project: Path
) -> None:
    users_files(project)
    git(project, "add", LOCAL)

    done = lazy("init", "--claude-code", "--yes")

    assert done.returncode == 0, done.stderr
    assert "is tracked by git, so ignoring it changes nothing: untrack it with " in done.stderr
    assert f"`git rm --cached {LOCAL}`" in done.stderr


def test_remove_leaves_a_committed_repository_as_it_was(lazy: Lazy, project: Path) -> None:
    users_files(project)
    (project / "lazy.toml").write_text('[storage]\nbackend = "sqlite"\n')
    git(project, "add", "lazy.toml", ".claude/settings.json", ".mcp.json")
    git(project, "commit", "-qm", "the team's set-up")
    before = git(project, "status", "--porcelain")

    lazy("init", "--claude-code", "--yes")
    changed = git(project, "status", "--porcelain")
    lazy("init", "--claude-code", "--remove")

    assert changed.splitlines() == [
        " M .claude/settings.json",
        " M .mcp.json",
        "?? .claude/.gitignore",
    ]
    assert before == f"?? {LOCAL}\n"
    assert git(project, "status", "--porcelain") == before


def test_outside_a_git_repository_nothing_is_ignored_and_nothing_said_about_git(
    lazy: Lazy, project: Path
) -> None:
    shutil.rmtree(project / ".git")
    (project / "lazy.toml").write_text('[storage]\nbackend = "sqlite"\n')

    done = lazy("init", "--claude-code", "--yes", "--json")

    report = json.loads(done.stdout)
    assert report["ignore"] == {"path": LOCAL, "status": "no_repository", "by": None}
    assert not (project / ".claude" / ".gitignore").exists()
    assert report["warnings"][:-1] == []  # the last one: lazy runs as `python -m` here
