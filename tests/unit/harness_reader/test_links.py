"""The Claude Code memory reader and symbolic links: a link is reported and never followed, a
memory directory linked out of the projects folder is not scanned, one linked within it is."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.harness_reader.tree import claude_slug, scan, write


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
