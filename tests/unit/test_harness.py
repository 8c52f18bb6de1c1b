"""The Claude Code memory reader, on harness trees built in a temporary folder."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lazy_memory.adapters.harness import ClaudeCodeMemory, slug
from lazy_memory.engine.importing import HarnessMemory, HarnessScan, plan_import
from lazy_memory.engine.records import RecordType

GIT_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def claude_slug(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(*args: str) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], check=True, capture_output=True)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


@pytest.fixture
def projects(home: Path) -> Path:
    return home / ".claude" / "projects"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with one commit; its path has a space, which the slug turns into a dash."""
    root = tmp_path / "work" / "my repo"
    root.mkdir(parents=True)
    git("init", "-q", str(root))
    git("-C", str(root), "commit", "-q", "--allow-empty", "-m", "initial")
    return root


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "lazy-data"


@pytest.fixture
def memory(projects: Path, project: Path) -> Path:
    """The project's own Claude Code memory directory."""
    directory = projects / claude_slug(project) / "memory"
    directory.mkdir(parents=True)
    return directory


def reader(project: Path, data_dir: Path, home: Path, **extra: str) -> ClaudeCodeMemory:
    return ClaudeCodeMemory(project, data_dir, environ={"HOME": str(home), **extra})


async def scan(project: Path, data_dir: Path, home: Path, **extra: str) -> HarnessScan:
    return await reader(project, data_dir, home, **extra).scan()


def by_name(found: HarnessScan) -> dict[str, HarnessMemory]:
    return {memory.name: memory for memory in found.memories}


def test_slug_replaces_every_character_but_ascii_letters_and_digits() -> None:
    assert slug(Path("/home/u/my repo")) == "-home-u-my-repo"
    assert slug(Path("/a_b/c.d/x+y")) == "-a-b-c-d-x-y"
    # Claude Code counts UTF-16 code units: é is one, an emoji beyond the BMP is two.
    assert slug(Path("/été/\U0001f600")) == "--t----"


async def test_reads_the_three_layouts(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "top.md",
        "---\nname: top-level\ndescription: Fields at the top\ntype: feedback\n"
        "originSessionId: s-1\nmodified: 2026-01-02T03:04:05Z\n---\nThe body.\n",
    )
    write(
        memory / "nested.md",
        "---\nname: nested\ndescription: Fields under metadata\nmetadata:\n  type: user\n"
        "  originSessionId: s-2\n  modified: 2026-02-03\n---\n\nBody after a blank line.\n",
    )
    write(memory / "plain.md", "\n# A heading first\n\nThen text.\n")

    found = by_name(await scan(project, data_dir, home))

    assert set(found) == {"top-level", "nested", "plain"}
    top = found["top-level"]
    assert (top.description, top.type, top.body) == ("Fields at the top", "feedback", "The body.\n")
    assert (top.session_id, top.modified) == ("s-1", "2026-01-02T03:04:05Z")
    assert top.path == str(memory / "top.md")
    assert top.mtime == os.stat(memory / "top.md").st_mtime
    nested = found["nested"]
    assert (nested.type, nested.session_id, nested.modified) == ("user", "s-2", "2026-02-03")
    assert nested.body == "\nBody after a blank line.\n"
    plain = found["plain"]
    assert (plain.description, plain.type) == ("A heading first", None)
    assert plain.body == "\n# A heading first\n\nThen text.\n"


async def test_top_level_fields_win_and_values_stay_as_written(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "file-name.md",
        "---\ntype: project\nmodified: 2026-02-30\nmetadata:\n  type: user\n"
        "  originSessionId: 0012\n---\n\n## First line\n",
    )

    [memory_file] = (await scan(project, data_dir, home)).memories

    assert (memory_file.name, memory_file.description) == ("file-name", "First line")
    assert (memory_file.type, memory_file.modified) == ("project", "2026-02-30")
    assert memory_file.session_id == "0012"


async def test_a_description_with_a_colon_is_rescued_by_quoting(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "colon.md",
        '---\nname: colon\ndescription: Note: use "X" \\ not Y\ntype: "reference"\n---\nBody\n',
    )

    found = await scan(project, data_dir, home)

    [memory_file] = found.memories
    assert memory_file.description == 'Note: use "X" \\ not Y'
    assert (memory_file.type, memory_file.body) == ("reference", "Body\n")
    assert found.notes == []


async def test_front_matter_beyond_rescue_is_read_as_body_and_noted(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    text = "---\nname: broken\ndescription: fine\n  tags: [unclosed\n---\nThe real first line\n"
    write(memory / "broken.md", text)
    write(memory / "listed.md", "---\n- a list\n---\nBody\n")

    found = await scan(project, data_dir, home)

    memories = by_name(found)
    assert (memories["broken"].body, memories["broken"].type) == (text, None)
    assert memories["broken"].description == "The real first line"
    assert memories["listed"].body == "---\n- a list\n---\nBody\n"
    assert {note.path for note in found.notes} == {
        str(memory / "broken.md"),
        str(memory / "listed.md"),
    }
    for note in found.notes:
        assert note.reason.startswith("unparseable front matter (")
        assert note.reason.endswith("); read as a file without front matter")
    assert found.skipped == []


async def test_a_long_description_is_kept_verbatim(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    description = "word " * 89 + "last!"
    assert len(description) == 450
    write(memory / "long.md", f"---\nname: long\ndescription: {description}\n---\nBody\n")

    [memory_file] = (await scan(project, data_dir, home)).memories

    assert memory_file.description == description


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


@contextlib.contextmanager
def opens_recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path os.open is given while the block runs (one relative to a dir_fd resolved)."""
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: str, flags: int, *args: int, **kwargs: int) -> int:
        folder = kwargs.get("dir_fd")
        where = os.fspath(path)
        if folder is not None:
            where = os.path.join(os.readlink(f"/proc/self/fd/{folder}"), where)
        opened.append(where)
        return real_open(path, flags, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", recording_open)
        yield opened


@contextlib.contextmanager
def fifo_watchdog(fifo: Path, seconds: float = 5.0) -> Iterator[list[bool]]:
    """Keep unblocking any reader stuck opening fifo after seconds; record each time it had to."""
    unblocked: list[bool] = []
    done = threading.Event()

    def unblock() -> None:
        done.wait(seconds)
        while not done.wait(0.1):
            with contextlib.suppress(OSError):  # ENXIO: nobody is opening it, as it should be
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                unblocked.append(True)

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    try:
        yield unblocked
    finally:
        done.set()
        watchdog.join()


async def test_a_link_is_reported_and_never_followed_even_within_the_directory(
    project: Path,
    data_dir: Path,
    home: Path,
    memory: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.md"
    os.mkfifo(secret)  # opening it would block: the proof that the reader never does
    (memory / "leak.md").symlink_to(secret)
    (memory / "team").mkdir()
    (memory / "team" / "escape").symlink_to(outside, target_is_directory=True)
    real = write(memory / "team" / "real.md", "---\nname: real\n---\nInside\n")
    (memory / "alias.md").symlink_to(Path("team") / "real.md")
    os.utime(real, (3_000_000, 3_000_000))

    with opens_recorded(monkeypatch) as opened, fifo_watchdog(secret) as unblocked:
        found = await scan(project, data_dir, home)

    assert unblocked == []
    # The only other file opened is the null device, the git subprocess's stdin.
    assert all(Path(path).is_relative_to(memory) for path in opened if path != os.devnull)
    assert str(secret) not in opened
    never_followed = "links are never followed"
    assert [(skipped.path, skipped.reason) for skipped in found.skipped] == [
        (str(memory / "alias.md"), f"a symbolic link (to team/real.md): {never_followed}"),
        (str(memory / "leak.md"), f"a symbolic link (to {secret}): {never_followed}"),
        (str(memory / "team" / "escape"), f"a symbolic link (to {outside}): {never_followed}"),
    ]
    assert [(m.path, m.mtime) for m in found.memories] == [(str(real), 3_000_000)]


async def test_a_memory_directory_linked_out_of_the_projects_folder_is_not_scanned(
    project: Path, data_dir: Path, home: Path, projects: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "memory"
    write(elsewhere / "planted.md", "Planted\n")
    (projects / claude_slug(project)).mkdir(parents=True)
    (projects / claude_slug(project) / "memory").symlink_to(elsewhere, target_is_directory=True)
    overlay = data_dir / "builder-projects" / "builder-1" / claude_slug(project)
    overlay.parent.mkdir(parents=True)
    overlay.symlink_to(elsewhere.parent, target_is_directory=True)

    found = await scan(project, data_dir, home)

    assert found.memories == []
    assert found.directories == []
    assert [skipped.path for skipped in found.skipped] == [
        str(projects / claude_slug(project) / "memory"),
        str(overlay / "memory"),
    ]


async def test_a_memory_directory_linked_within_the_projects_folder_is_scanned(
    project: Path, data_dir: Path, home: Path, projects: Path
) -> None:
    moved = write(projects / "-moved" / "memory" / "kept.md", "Kept\n").parent
    (projects / claude_slug(project)).symlink_to(moved.parent, target_is_directory=True)

    found = await scan(project, data_dir, home)

    assert [m.path for m in found.memories] == [
        str(projects / claude_slug(project) / "memory" / "kept.md")
    ]


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


async def test_an_undecodable_file_is_skipped_with_its_reason(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    (memory / "binary.md").write_bytes(b"\xff\xfe not text")

    found = await scan(project, data_dir, home)

    assert found.memories == []
    [skipped] = found.skipped
    assert skipped.path == str(memory / "binary.md")
    assert skipped.reason.startswith("not UTF-8 text")


async def test_the_planner_keeps_what_the_reader_found(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    description = "x" * 450
    write(
        memory / "imported.md",
        f"---\nname: imported\ndescription: {description}\nmetadata:\n  type: Gotcha\n"
        "  originSessionId: session-7\n  modified: 2026-03-04T05:06:07Z\n---\nBody *as is*\n",
    )
    write(memory / "present.md", "Already in the store\n")

    plan = plan_import(await scan(project, data_dir, home), existing=["present"])

    [planned] = plan.records
    content = planned.content
    assert (content.name, content.type, content.description) == (
        "imported",
        RecordType.PROJECT,
        description,
    )
    assert content.body == "Body *as is*\n"
    assert content.provenance is not None
    assert content.provenance.source == str(memory / "imported.md")
    assert content.provenance.session_id == "session-7"
    assert content.provenance.modified == "2026-03-04T05:06:07Z"
    assert content.provenance.original_type == "Gotcha"
    assert (plan.already_present, plan.retyped, plan.long_descriptions) == (
        ["present"],
        ["imported"],
        ["imported"],
    )
    assert plan.directories == [str(memory)]
