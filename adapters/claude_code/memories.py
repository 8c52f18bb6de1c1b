"""The reader of Claude Code memory directories: finds this project's memory files and parses them.

Claude Code keeps a project's memory under `<config>/projects/<slug>/memory/`, and lazy's
per-builder overlays keep the same layout under `<data>/builder-projects/<id>/`
(docs/architecture.md, Import). The reader looks in every directory belonging to the project
root, the repository's main checkout or any of its worktrees, and never reads a file outside
the trees it scans. Inside a memory directory it reads regular files only, each opened
relative to its folder's descriptor with O_NOFOLLOW (and O_NONBLOCK, so a FIFO swapped in
never blocks) and checked with fstat to be the very file listed: a symbolic link, a hard
link (a second name, maybe of a file outside), a FIFO, socket or device, and a file over
MAX_FILE_BYTES are skipped and reported, never opened.
"""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from lazy_memory.adapters.claude_code.front_matter import parse_memory
from lazy_memory.engine.importing import HarnessReader, HarnessScan, SkippedFile
from lazy_memory.engine.wording import counted

# Claude Code cuts longer slugs to this many characters and appends `-` and a hash.
_SLUG_MAX_LENGTH = 200
_GIT_TIMEOUT_SECONDS = 5.0
_INDEX_FILE = "MEMORY.md"
_SHARED_FOLDER = "team"
_LOGS_FOLDER = "logs"
# os.open flags: a FIFO or device swapped in for a *.md file must not block the scan.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_FILE_BYTES = 1024 * 1024
"""The largest memory file read (1 MiB); a real one is a few kilobytes."""
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


class ClaudeCodeMemory(HarnessReader):
    """Reads the Claude Code memory files of one project and of lazy's per-builder overlays."""

    def __init__(
        self, project_root: Path, data_dir: Path, environ: Mapping[str, str] = os.environ
    ) -> None:
        self._project_root = project_root
        self._data_dir = data_dir
        home = environ.get("HOME") or str(Path.home())
        self._config_dir = Path(environ.get("CLAUDE_CONFIG_DIR") or Path(home) / ".claude")

    async def scan(self) -> HarnessScan:
        """Every memory file in the project's Claude Code memory directories and overlays."""
        return await asyncio.to_thread(self._scan)

    def _scan(self) -> HarnessScan:
        scan = HarnessScan()
        slugs = [slug(path) for path in dict.fromkeys(_project_paths(self._project_root))]
        projects = self._config_dir.absolute() / "projects"
        bases = [(projects, projects)]
        overlays = self._data_dir.absolute() / "builder-projects"
        bases += [(overlay, overlays) for overlay in _subdirectories(overlays, scan)]
        seen: set[str] = set()
        for base, boundary in bases:
            for memory_dir in _memory_directories(base, slugs, scan):
                real = os.path.realpath(memory_dir)
                if not _within(real, os.path.realpath(boundary)):
                    reason = f"a link pointing outside {boundary}: {real}"
                    scan.skipped.append(SkippedFile(path=str(memory_dir), reason=reason))
                elif real not in seen:
                    seen.add(real)
                    scan.directories.append(str(memory_dir))
                    _walk_memory_directory(str(memory_dir), real, scan)
        return scan


def slug(path: Path) -> str:
    """The name Claude Code gives path's project folder, before cutting a long one."""
    # Claude Code replaces UTF-16 code units, so a character beyond the BMP costs two dashes.
    return "".join(
        character if character.isascii() and character.isalnum() else "-" * _utf16_units(character)
        for character in str(path)
    )


def _utf16_units(character: str) -> int:
    return 2 if ord(character) > 0xFFFF else 1


def _matches(name: str, project_slug: str) -> bool:
    """Whether a folder called name is the one Claude Code made for project_slug."""
    if name == project_slug:
        return True
    # The hash after a cut slug differs between Claude Code builds, so only the prefix counts.
    cut = project_slug[:_SLUG_MAX_LENGTH] + "-"
    return len(project_slug) > _SLUG_MAX_LENGTH and name.startswith(cut)


def _project_paths(root: Path) -> list[Path]:
    """The project root, then the repository's main checkout and every worktree, resolved."""
    paths = [root.resolve()]
    try:
        listing = subprocess.run(
            ["git", "-C", str(root), "worktree", "list", "--porcelain"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return paths
    if listing.returncode != 0:
        return paths
    for line in listing.stdout.splitlines():
        if line.startswith("worktree "):
            paths.append(Path(line.removeprefix("worktree ")).resolve())
    return paths


def _subdirectories(directory: Path, scan: HarnessScan) -> list[Path]:
    return [directory / entry.name for entry in _entries(directory, scan) if _is_dir(entry)]


def _memory_directories(base: Path, slugs: list[str], scan: HarnessScan) -> list[Path]:
    """The memory folder of every project folder in base that belongs to one of slugs."""
    found = []
    for entry in _entries(base, scan):
        if any(_matches(entry.name, project_slug) for project_slug in slugs):
            memory_dir = base / entry.name / "memory"
            if memory_dir.is_dir():
                found.append(memory_dir)
    return found


def _within(real_path: str, real_directory: str) -> bool:
    return os.path.commonpath([real_path, real_directory]) == real_directory


def _walk_memory_directory(shown: str, real: str, scan: HarnessScan) -> None:
    """Read the memory files under the memory directory at real (reported as shown)."""
    try:
        descriptor = os.open(real, _FOLDER_FLAGS)
    except OSError as error:
        reason = f"cannot read the directory: {error.strerror or error}"
        scan.skipped.append(SkippedFile(path=_printable(shown), reason=reason))
        return
    try:
        _walk(descriptor, shown, scan, set(), top=True)
    finally:
        os.close(descriptor)


def _walk(
    folder: int, shown: str, scan: HarnessScan, visited: set[tuple[int, int]], *, top: bool
) -> None:
    """Read the memory files of the open folder (shown is its path as reported), and below.

    Every entry is looked at with lstat relative to the folder's descriptor: nothing is
    followed, so nothing outside the memory directory is ever reached.
    """
    status = os.fstat(folder)
    if (status.st_dev, status.st_ino) in visited:
        return  # a bind mount back to a folder already read
    visited.add((status.st_dev, status.st_ino))
    for entry in _entries(folder, scan, shown=shown):
        name = entry.name
        if name.startswith("."):
            continue
        path = os.path.join(shown, name)
        try:
            found = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError as error:
            _skip(scan, path, f"cannot read: {error.strerror or error}")
            continue
        wanted_folder = name == _SHARED_FOLDER if top else name != _LOGS_FOLDER
        if stat.S_ISLNK(found.st_mode):
            # Reported where it would have been read or walked; any other link is no memory.
            if _is_memory_file_name(name) or (wanted_folder and _names_folder(folder, name)):
                _skip(scan, path, _link_reason(folder, name))
        elif stat.S_ISDIR(found.st_mode):
            if wanted_folder:
                _walk_folder(folder, name, path, found, scan, visited)
        elif _is_memory_file_name(name):
            _read(folder, name, path, found, scan)


def _walk_folder(
    parent: int,
    name: str,
    path: str,
    listed: os.stat_result,
    scan: HarnessScan,
    visited: set[tuple[int, int]],
) -> None:
    try:
        descriptor = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    except OSError as error:
        _skip(scan, path, f"cannot read the directory: {error.strerror or error}")
        return
    try:
        if not _same_file(os.fstat(descriptor), listed):
            _skip(scan, path, "it changed while being read; run the import again")
        else:
            _walk(descriptor, path, scan, visited, top=False)
    finally:
        os.close(descriptor)


def _entries(
    directory: Path | str | int, scan: HarnessScan, shown: str | None = None
) -> list[os.DirEntry[str]]:
    """The entries of directory by name; none if absent, reported (as shown) if unreadable."""
    try:
        with os.scandir(directory) as iterator:
            return sorted(iterator, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        reason = f"cannot read the directory: {error.strerror or error}"
        _skip(scan, shown or str(directory), reason)
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    # Follows a link with stat, which reads metadata only, never the target's content.
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_memory_file_name(name: str) -> bool:
    """A markdown file other than the harness's index (a lock file never ends in .md)."""
    return name.endswith(".md") and name != _INDEX_FILE


def _names_folder(folder: int, name: str) -> bool:
    # Follows the link with stat, which reads metadata only, never the target's content.
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=folder).st_mode)
    except OSError:
        return False


def _link_reason(folder: int, name: str) -> str:
    try:
        target = os.readlink(name, dir_fd=folder)
    except OSError:
        target = "?"
    return f"a symbolic link (to {_printable(target)}): links are never followed"


def _not_readable(found: os.stat_result) -> str | None:
    """Why a file with this status is not read, or None for a regular file to read."""
    mode = found.st_mode
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        return f"{kind}, not a regular file: only regular files are read"
    if found.st_nlink > 1:
        return (
            f"a hard link ({counted(found.st_nlink, 'name')} for one file, maybe one outside the "
            "memory directory): only files with a single name are read"
        )
    if found.st_size > MAX_FILE_BYTES:
        return f"{found.st_size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit of a memory file"
    return None


def _read(folder: int, name: str, path: str, listed: os.stat_result, scan: HarnessScan) -> None:
    """Parse the file name in folder (listed with lstat as listed, reported as path)."""
    reason = _not_readable(listed)
    if reason is not None:
        _skip(scan, path, reason)
        return
    try:
        with open(os.open(name, _OPEN_FLAGS, dir_fd=folder), "rb") as file:
            status = os.fstat(file.fileno())
            # What was opened must be what was listed: a file swapped in between is caught.
            if _same_file(status, listed):
                reason = _not_readable(status)
            else:
                reason = "it changed while being read; run the import again"
            if reason is not None:
                _skip(scan, path, reason)
                return
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        _skip(scan, path, f"cannot read: {error.strerror or error}")
        return
    if len(data) > MAX_FILE_BYTES:
        _skip(scan, path, f"over the {MAX_FILE_BYTES:,}-byte limit of a memory file")
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        _skip(scan, path, f"not UTF-8 text ({error.reason} at byte {error.start})")
        return
    scan.memories.append(parse_memory(_printable(path), text, status.st_mtime, scan))


def _same_file(status: os.stat_result, listed: os.stat_result) -> bool:
    return (status.st_dev, status.st_ino) == (listed.st_dev, listed.st_ino)


def _skip(scan: HarnessScan, path: str, reason: str) -> None:
    scan.skipped.append(SkippedFile(path=_printable(path), reason=reason))


def _printable(path: str) -> str:
    """path as text: a byte of the file name that is not UTF-8 written as `\\xNN`."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
