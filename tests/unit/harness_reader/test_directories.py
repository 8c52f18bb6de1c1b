"""Where the Claude Code memory reader looks: the project's slug, the memory directory and its
team folder, every worktree, a cut slug, builder overlays, CLAUDE_CONFIG_DIR, none at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lazy_memory.adapters.claude_code.memories import ClaudeCodeMemory, slug
from lazy_memory.engine.importing import HarnessScan, plan_import
from tests.unit.harness_reader.tree import claude_slug, git, scan, write


def test_slug_replaces_every_character_but_ascii_letters_and_digits() -> None:
    assert slug(Path("/home/u/my repo")) == "-home-u-my-repo"
    assert slug(Path("/a_b/c.d/x+y")) == "-a-b-c-d-x-y"
    # Claude Code counts UTF-16 code units: é is one, an emoji beyond the BMP is two.
    assert slug(Path("/été/\U0001f600")) == "--t----"


async def test_reads_team_and_ignores_the_index_logs_locks_hidden_and_other_files(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    for ignored in (
        "MEMORY.md",
        "logs/x.md",
        "x.lock",
        ".lock",
        "x.md.lock",
        ".hidden.md",
        "notes.txt",
        "other/x.md",
        "team/MEMORY.md",
        "team/logs/x.md",
        "team/.drafts/x.md",
    ):
        write(memory / ignored, "---\nname: ignored\n---\n")
    write(memory / "mine.md", "Mine\n")
    write(memory / "team" / "shared.md", "Shared\n")
    write(memory / "team" / "deeper" / "nested.md", "Nested\n")

    found = await scan(project, data_dir, home)

    assert sorted(memory_file.name for memory_file in found.memories) == [
        "mine",
        "nested",
        "shared",
    ]
    assert found.skipped == []
    assert found.directories == [str(memory)]


async def test_the_main_checkout_and_every_worktree_are_the_project(
    project: Path, data_dir: Path, home: Path, projects: Path, memory: Path, tmp_path: Path
) -> None:
    worktree = tmp_path / "work" / "second tree"
    git("-C", str(project), "worktree", "add", "-q", "-b", "second", str(worktree))
    write(memory / "main.md", "From the main checkout\n")
    write(projects / claude_slug(worktree) / "memory" / "tree.md", "From the worktree\n")
    write(projects / "-some-other-project" / "memory" / "other.md", "Not ours\n")

    from_main = await scan(project, data_dir, home)
    from_worktree = await scan(worktree, data_dir, home)

    for found in (from_main, from_worktree):
        assert sorted(memory_file.name for memory_file in found.memories) == ["main", "tree"]
        assert set(found.directories) == {
            str(memory),
            str(projects / claude_slug(worktree) / "memory"),
        }


async def test_without_git_only_the_root_is_the_project(
    project: Path, data_dir: Path, home: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(memory / "main.md", "Found anyway\n")
    monkeypatch.setenv("PATH", "")

    found = await scan(project, data_dir, home)

    assert [memory_file.name for memory_file in found.memories] == ["main"]


async def test_a_long_project_path_matches_its_cut_slug_by_prefix(
    data_dir: Path, home: Path, projects: Path, tmp_path: Path
) -> None:
    root = tmp_path.joinpath(*[f"nested-directory-{level:02d}" for level in range(12)])
    root.mkdir(parents=True)
    full = claude_slug(root)
    assert len(full) > 200
    write(projects / (full[:200] + "-abc123") / "memory" / "deep.md", "Deep\n")
    write(projects / (full[:200] + "abc123") / "memory" / "near.md", "Not a cut slug\n")
    write(projects / (full[:199] + "-abc123") / "memory" / "short.md", "Too short\n")

    found = await scan(root, data_dir, home)

    assert [memory_file.name for memory_file in found.memories] == ["deep"]
    assert found.directories == [str(projects / (full[:200] + "-abc123") / "memory")]


async def test_builder_overlays_are_read_and_duplicates_are_left_to_the_planner(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    overlays = data_dir / "builder-projects"
    older = write(overlays / "builder-1" / claude_slug(project) / "memory" / "dup.md", "Older\n")
    newer = write(overlays / "builder-2" / claude_slug(project) / "memory" / "dup.md", "Newer\n")
    write(overlays / "builder-2" / "-elsewhere" / "memory" / "other.md", "Not ours\n")
    os.utime(older, (1_000_000, 1_000_000))
    os.utime(newer, (2_000_000, 2_000_000))

    found = await scan(project, data_dir, home)

    assert sorted((m.path, m.mtime, m.body) for m in found.memories) == [
        (str(older), 1_000_000, "Older\n"),
        (str(newer), 2_000_000, "Newer\n"),
    ]
    assert found.directories == [str(memory), str(older.parent), str(newer.parent)]
    plan = plan_import(found, existing=[])
    assert [record.source for record in plan.records] == [str(newer)]
    assert [superseded.path for superseded in plan.superseded] == [str(older)]


async def test_claude_config_dir_takes_precedence_over_home(
    project: Path,
    data_dir: Path,
    home: Path,
    memory: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(memory / "from-home.md", "Home\n")
    config = tmp_path / "config"
    write(config / "projects" / claude_slug(project) / "memory" / "chosen.md", "Chosen\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))

    found = await scan(project, data_dir, home, CLAUDE_CONFIG_DIR=str(config))
    from_process_environment = await ClaudeCodeMemory(project, data_dir).scan()

    for result in (found, from_process_environment):
        assert [m.name for m in result.memories] == ["chosen"]


async def test_a_missing_config_directory_is_an_empty_scan(
    project: Path, data_dir: Path, home: Path
) -> None:
    assert await scan(project, data_dir, home) == HarnessScan()
