"""Importing Claude Code's memory files: `lazy doctor --import-memory`, `lazy doctor`, `lazy init`.

Each test builds a harness tree under its own HOME and CLAUDE_CONFIG_DIR and runs the real
`lazy` command in a real git repository.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.jsonrpc import RawClient

Run = Callable[..., subprocess.CompletedProcess[str]]
LONG = "A description far longer than the authoring limit, " * 9  # 459 characters


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "my repo"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Claude Code config dir, with HOME pointed into the test's folder too."""
    config = tmp_path / "claude-config"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def memory_dir(claude: Path, repository: Path) -> Path:
    """This project's Claude Code memory directory."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(repository.resolve()))
    directory = claude / "projects" / slug / "memory"
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def run(repository: Path) -> Run:
    """Run `lazy ARGS...` in the repository."""

    def lazy(*arguments: str, input: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
            cwd=repository,
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )

    return lazy


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def harness(memory_dir: Path) -> None:
    """One file of each layout, plus the files an import must leave alone."""
    write(
        memory_dir / "deploy.md",
        "---\nname: deploy-steps\ndescription: How we deploy\ntype: project\n---\nmake deploy\n",
    )
    write(
        memory_dir / "prefs.md",
        "---\nname: user-prefs\ndescription: " + LONG + "\nmetadata:\n  type: user\n"
        "  originSessionId: 5f0c-11\n  modified: 2026-10-01\n---\nLikes small PRs.\n",
    )
    write(memory_dir / "Plain Notes.md", "# Release checklist\n\nTag, then push.\n")
    write(
        memory_dir / "odd.md",
        "---\nname: odd-type\ndescription: Note: colons break YAML\ntype: opinion\n---\nx\n",
    )
    write(memory_dir / "team" / "shared.md", "---\nname: team-rule\ndescription: Ask first\n---\n")
    write(memory_dir / "MEMORY.md", "- [deploy](deploy.md)\n")
    write(memory_dir / "logs" / "today.md", "a log, not a memory\n")


def history(run: Run) -> list[dict[str, object]]:
    return list(json.loads(run("memory", "history", "--json").stdout))


def test_a_preview_without_a_terminal_imports_nothing_and_says_how(
    run: Run, memory_dir: Path
) -> None:
    harness(memory_dir)

    previewed = run("doctor", "--import-memory")

    assert previewed.returncode == 0, previewed.stderr
    assert "To import (5):" in previewed.stdout
    assert f"deploy-steps (project)  from {memory_dir / 'deploy.md'}" in previewed.stdout
    assert "team-rule (project)" in previewed.stdout
    assert "MEMORY.md" not in previewed.stdout
    assert "today" not in previewed.stdout
    assert "Rerun with --yes to import these 5 records" in previewed.stderr
    assert history(run) == []


def test_an_import_is_verbatim_attributed_and_a_rerun_is_a_no_op(
    run: Run, memory_dir: Path
) -> None:
    harness(memory_dir)

    imported = run("doctor", "--import-memory", "--yes")

    assert imported.returncode == 0, imported.stderr
    assert "Imported 5 records, attributed to system:harness-import." in imported.stdout
    assert "1 imported description is over 200 characters" in imported.stdout
    assert "odd-type has the type 'opinion', outside the four" in imported.stdout
    prefs = json.loads(run("memory", "show", "user-prefs", "--json").stdout)
    assert prefs["description"] == LONG.rstrip()
    assert prefs["type"] == "user"
    assert prefs["updated_by"] == {"kind": "system", "detail": "harness-import"}
    assert prefs["provenance"] == {
        "source": str(memory_dir / "prefs.md"),
        "session_id": "5f0c-11",
        "modified": "2026-10-01",
        "original_type": None,
        "original_name": None,
    }
    odd = json.loads(run("memory", "show", "odd-type", "--json").stdout)
    assert (odd["type"], odd["provenance"]["original_type"]) == ("project", "opinion")
    assert odd["description"] == "Note: colons break YAML"
    plain = json.loads(run("memory", "show", "Plain Notes", "--json").stdout)
    assert plain["description"] == "Release checklist"
    assert plain["body"] == "# Release checklist\n\nTag, then push.\n"
    assert {entry["operation"] for entry in history(run)} == {"import"}

    again = run("doctor", "--import-memory", "--yes")

    assert "Nothing to import." in again.stdout
    assert len(history(run)) == 5


def test_a_rerun_never_clobbers_a_human_edit_or_revives_a_removal(
    run: Run, memory_dir: Path
) -> None:
    harness(memory_dir)
    run("doctor", "--import-memory", "--yes")
    run("memory", "save", "deploy-steps", "-d", "Edited by a person")
    run("memory", "rm", "team-rule")
    write(memory_dir / "deploy.md", "---\nname: deploy-steps\ndescription: Harness v2\n---\n")

    rerun = run("doctor", "--import-memory", "--yes")

    assert "Already in the store, left alone (5)" in rerun.stdout
    shown = json.loads(run("memory", "show", "deploy-steps", "--json").stdout)
    assert shown["description"] == "Edited by a person"
    assert run("memory", "show", "team-rule").returncode == 3


def test_duplicates_across_overlays_the_newest_file_wins(
    run: Run, memory_dir: Path, isolated_environment: Path
) -> None:
    write(memory_dir / "a.md", "---\nname: shared\ndescription: old copy\n---\n", mtime=1_000)
    slug = memory_dir.parent.name
    overlay = isolated_environment / "builder-projects" / "b7" / slug / "memory"
    write(overlay / "a.md", "---\nname: shared\ndescription: new copy\n---\n", mtime=2_000)

    imported = run("doctor", "--import-memory", "--yes")

    assert f"{memory_dir / 'a.md'}: a newer copy: {overlay / 'a.md'}" in imported.stdout
    assert json.loads(run("memory", "show", "shared", "--json").stdout)["description"] == (
        "new copy"
    )


def test_many_files_show_progress_in_plain_lines_off_a_terminal(run: Run, memory_dir: Path) -> None:
    for index in range(60):
        write(memory_dir / f"note-{index}.md", f"---\nname: note-{index}\ndescription: n\n---\n")

    imported = run("doctor", "--import-memory", "--yes")

    assert "importing: 1/60\n" in imported.stderr
    *progress, started = imported.stderr.splitlines()
    assert progress[-1] == "importing: 60/60"
    assert started.startswith("lazy: started a new store in "), "the import's first write"
    assert "\r" not in imported.stderr, "no redraw codes in a log"


def test_plain_doctor_reports_harness_memory_and_never_writes(run: Run, memory_dir: Path) -> None:
    harness(memory_dir)

    diagnosed = run("doctor")
    report = json.loads(run("doctor", "--json").stdout)

    assert "5 records in Claude Code's memory files have no lazy counterpart" in (diagnosed.stdout)
    assert "run `lazy doctor --import-memory` to import them" in diagnosed.stdout
    assert sorted(report["importable"]) == sorted(
        ["deploy-steps", "user-prefs", "Plain Notes", "odd-type", "team-rule"]
    )
    assert history(run) == []


def test_init_writes_the_config_and_offers_the_import(
    run: Run, memory_dir: Path, repository: Path
) -> None:
    harness(memory_dir)

    first = run("init", "--non-interactive")
    second = run("init", "--non-interactive")

    assert (repository / "lazy.toml").read_text().startswith("# lazy-memory configuration")
    assert "Found 5 records in the harness's memory files; run `lazy doctor " in first.stdout
    assert "already exists; left as it is." in second.stdout
    assert history(run) == []


def test_init_in_a_terminal_imports_when_the_user_says_yes(
    memory_dir: Path, repository: Path
) -> None:
    harness(memory_dir)
    command = f"{sys.executable} -m lazy_memory.rpc.cli init"

    answered = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        cwd=repository,
        input="y\n",
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert "Import these 5 records now? [y/N]" in answered.stdout
    assert "Imported 5 records," in answered.stdout


async def test_import_over_the_engine_previews_applies_and_refuses_agents(
    memory_dir: Path, repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness(memory_dir)
    monkeypatch.chdir(repository)

    agent = await RawClient.spawn(
        ["engine"], {**os.environ, "LAZY_TASK_ID": "t-1"}, tmp_path / "agent.log"
    )
    await agent.initialize()
    refused = await agent.request("lazy/memory/import", {"apply": True})
    await agent.close()
    builder = await RawClient.spawn(["engine"], dict(os.environ), tmp_path / "builder.log")
    await builder.initialize()
    preview = await builder.result("lazy/memory/import", {})
    applied = await builder.result("lazy/memory/import", {"apply": True})
    await builder.close()

    assert refused["error"]["code"] == -32013
    assert preview["applied"] is False
    assert len(preview["plan"]["records"]) == 5
    assert sorted(applied["imported"]) == sorted(
        ["deploy-steps", "user-prefs", "Plain Notes", "odd-type", "team-rule"]
    )
