"""The memory reader reads only regular files inside the folders it scans (#17 point 4), and
what #18 point 8 asks of it: front matter after a byte-order mark, reported names and types."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import stat
from pathlib import Path

import pytest

from lazy_memory.adapters.claude_code import memories as harness
from lazy_memory.adapters.claude_code.memories import MAX_FILE_BYTES, ClaudeCodeMemory
from lazy_memory.engine.importing import HarnessScan, plan_import
from lazy_memory.engine.names import name_problem
from lazy_memory.engine.records import RecordType
from tests.support.components import ROOT, missing


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project folder (no git), its path free of the characters a slug turns into dashes."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def memory(tmp_path: Path, root: Path) -> Path:
    """The project's Claude Code memory directory under a config dir of the test's own."""
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(root.resolve()))
    directory = tmp_path / "claude" / "projects" / slug / "memory"
    directory.mkdir(parents=True)
    return directory


async def scan(tmp_path: Path, root: Path) -> HarnessScan:
    environment = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    return await ClaudeCodeMemory(root, tmp_path / "data", environment).scan()


def reasons(found: HarnessScan) -> dict[str, str]:
    return {Path(skipped.path).name: skipped.reason for skipped in found.skipped}


async def test_a_hard_link_is_skipped_and_reported_even_if_its_other_name_is_inside(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("---\nname: stolen\n---\nSECRET-CANARY\n")
    os.link(outside, memory / "planted.md")
    (memory / "own.md").write_text("Own\n")
    os.link(memory / "own.md", memory / "twin.md")

    found = await scan(tmp_path, root)

    assert found.memories == []
    assert set(reasons(found)) == {"planted.md", "own.md", "twin.md"}
    assert all(reason.startswith("a hard link (2 names") for reason in reasons(found).values())
    assert "SECRET-CANARY" not in repr(found)


async def test_fifos_sockets_and_devices_are_never_opened(
    tmp_path: Path, root: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(memory / "fifo.md")  # opening it for reading without O_NONBLOCK would block
    listener = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(memory)  # a socket's path must be short: bind it relative
    listener.bind("socket.md")
    try:
        os.mknod(memory / "device.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        missing(ROOT, "creating a device node needs CAP_MKNOD")
    try:
        found = await asyncio.wait_for(scan(tmp_path, root), timeout=10)
    finally:
        listener.close()

    assert found.memories == []
    assert reasons(found) == {
        "fifo.md": "a FIFO, not a regular file: only regular files are read",
        "socket.md": "a socket, not a regular file: only regular files are read",
        "device.md": "a character device, not a regular file: only regular files are read",
    }


async def test_a_file_over_the_size_limit_is_skipped_and_one_at_it_is_read(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    (memory / "huge.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (memory / "edge.md").write_bytes(b"y" * MAX_FILE_BYTES)

    found = await scan(tmp_path, root)

    assert [len(memory_file.body) for memory_file in found.memories] == [MAX_FILE_BYTES]
    assert reasons(found) == {
        "huge.md": "1,048,577 bytes, over the 1,048,576-byte limit of a memory file"
    }


async def test_a_file_swapped_after_it_was_listed_is_caught_by_fstat(
    tmp_path: Path, root: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (memory / "swapped.md").write_text("Listed\n")
    (memory / "fifo-swapped.md").write_text("Listed\n")
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE-CANARY\n")
    real_open = os.open

    def swapping_open(path: str, flags: int, *args: int, **kwargs: int) -> int:
        # Between the reader's lstat and its open, another file takes the listed name.
        if path == "swapped.md":
            os.replace(outside, memory / "swapped.md")
        elif path == "fifo-swapped.md":
            os.unlink(memory / "fifo-swapped.md")
            os.mkfifo(memory / "fifo-swapped.md")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(harness.os, "open", swapping_open)
    found = await asyncio.wait_for(scan(tmp_path, root), timeout=10)

    assert found.memories == []
    changed = "it changed while being read; run the import again"
    assert reasons(found)["swapped.md"] == changed
    # The FIFO may take the freed inode number: then fstat tells it by its type instead.
    fifo = "a FIFO, not a regular file: only regular files are read"
    assert reasons(found)["fifo-swapped.md"] in (changed, fifo)
    assert "OUTSIDE-CANARY" not in repr(found)


async def test_a_symlinked_team_folder_is_reported_not_followed(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "note.md").write_text("ELSEWHERE-CANARY\n")
    (memory / "team").symlink_to(elsewhere, target_is_directory=True)
    (memory / "notes.txt").symlink_to(elsewhere / "note.md")  # not a memory file: no report

    found = await scan(tmp_path, root)

    assert found.memories == []
    assert reasons(found) == {"team": f"a symbolic link (to {elsewhere}): links are never followed"}


async def test_front_matter_after_a_byte_order_mark_is_read(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    (memory / "bom.md").write_bytes(
        "\ufeff---\nname: with-bom\ndescription: Saved by Notepad\ntype: user\n---\nBody\n".encode()
    )
    (memory / "plain bom.md").write_bytes("\ufeff# Heading\n\nText\n".encode())

    found = {memory_file.name: memory_file for memory_file in (await scan(tmp_path, root)).memories}

    assert set(found) == {"with-bom", "plain bom"}
    bom = found["with-bom"]
    assert (bom.description, bom.type, bom.body) == ("Saved by Notepad", "user", "Body\n")
    assert found["plain bom"].description == "Heading"
    assert found["plain bom"].body == "# Heading\n\nText\n"


async def test_a_name_that_breaks_the_rule_is_renamed_and_reported_never_dropped(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    (memory / "a.md").write_text("---\nname: ../../etc/passwd\ndescription: d\n---\nA\n")
    (memory / "b.md").write_text(f"---\nname: {'n' * 5000}\ndescription: d\n---\nB\n")
    (memory / "c.md").write_text('---\nname: "tab\\there\\e[31m"\ndescription: d\n---\nC\n')
    (memory / "d.md").write_text("---\nname: x (user): forged\ndescription: d\n---\nD\n")
    (memory / ".e.md").write_text("hidden files are not memory files\n")
    (memory / "Release checklist.md").write_text("# Tag, then push\n")

    plan = plan_import(await scan(tmp_path, root), existing=[])

    names = {planned.content.name: planned for planned in plan.records}
    assert len(names) == 5
    assert "Release checklist" in names
    assert plan.skipped == []
    originals = {renamed.original: renamed for renamed in plan.renamed}
    assert set(originals) == {
        "../../etc/passwd",
        "n" * 5000,
        "tab\there\x1b[31m",
        "x (user): forged",
    }
    for original, renamed in originals.items():
        assert name_problem(renamed.name) is None
        provenance = names[renamed.name].content.provenance
        assert provenance is not None
        assert provenance.original_name == original
        assert provenance.source == renamed.path
    assert originals["../../etc/passwd"].name.startswith("-..-etc-passwd-")


async def test_a_rerun_finds_a_record_an_older_import_stored_under_the_original_name(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    (memory / "a.md").write_text('---\nname: "old\\tname"\ndescription: d\ntype: Gotcha\n---\n')

    plan = plan_import(await scan(tmp_path, root), existing=["old\tname"])

    assert (plan.records, plan.already_present) == ([], ["old\tname"])


async def test_an_unknown_type_is_kept_in_the_provenance_and_listed(
    tmp_path: Path, root: Path, memory: Path
) -> None:
    (memory / "a.md").write_text("---\nname: odd\ndescription: d\ntype: Gotcha\n---\n")

    plan = plan_import(await scan(tmp_path, root), existing=[])

    [planned] = plan.records
    assert planned.content.type is RecordType.PROJECT
    assert planned.content.provenance is not None
    assert planned.content.provenance.original_type == "Gotcha"
    assert plan.retyped == ["odd"]
