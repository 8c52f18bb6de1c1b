"""The reader of Claude Code memory directories: finds this project's memory files and parses them.

Claude Code keeps a project's memory under `<config>/projects/<slug>/memory/`, and lazy's
per-builder overlays keep the same layout under `<data>/builder-projects/<id>/`
(ARCHITECTURE.md §6). The reader looks in every directory belonging to the project root, the
repository's main checkout or any of its worktrees, and never reads a file outside the trees
it scans: links pointing elsewhere are reported, not followed.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

import yaml

from lazy_memory.engine.importing import HarnessMemory, HarnessReader, HarnessScan, SkippedFile

# Claude Code cuts longer slugs to this many characters and appends `-` and a hash.
_SLUG_MAX_LENGTH = 200
_GIT_TIMEOUT_SECONDS = 5.0
_INDEX_FILE = "MEMORY.md"
_SHARED_FOLDER = "team"
_LOGS_FOLDER = "logs"
_FIRST_FENCE = re.compile(r"---[ \t\r]*")
_CLOSING_FENCE = re.compile(r"^---[ \t\r]*$", re.MULTILINE)
_NULL_TAG = "tag:yaml.org,2002:null"
_TOP_LEVEL_FIELDS = ("name", "description", "type", "originSessionId", "modified")
_METADATA_FIELDS = ("type", "originSessionId", "modified")
_KEY_VALUE_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(?P<value>\S.*?)\s*")
# Left alone by the rescue: already a quoted scalar, or the header of a block scalar.
_KEEP_AS_WRITTEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[|>][-+0-9]*")
# os.open flags: a FIFO or device named *.md must not block the scan.
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


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
                    _walk(str(memory_dir), real, real, scan, set(), top=True)
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


def _entries(
    directory: Path | str, scan: HarnessScan, shown: str | None = None
) -> list[os.DirEntry[str]]:
    """The entries of directory by name; none if absent, reported (as shown) if unreadable."""
    try:
        with os.scandir(directory) as iterator:
            return sorted(iterator, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        reason = f"cannot read the directory: {error.strerror or error}"
        scan.skipped.append(SkippedFile(path=shown or str(directory), reason=reason))
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    # Follows a link with stat, which reads metadata only, never the target's content.
    try:
        return entry.is_dir()
    except OSError:
        return False


def _within(real_path: str, real_directory: str) -> bool:
    return os.path.commonpath([real_path, real_directory]) == real_directory


def _walk(
    found: str, real: str, memory_root: str, scan: HarnessScan, visited: set[str], *, top: bool
) -> None:
    """Read the memory files of one folder (found is its path as reported, real its real path)."""
    if real in visited:
        return  # a link back to a folder already read
    visited.add(real)
    for entry in _entries(real, scan, shown=found):
        name = entry.name
        if name.startswith("."):
            continue
        is_directory = _is_dir(entry)
        if is_directory:
            wanted = name == _SHARED_FOLDER if top else name != _LOGS_FOLDER
        else:
            wanted = _is_memory_file_name(name)
        if not wanted:
            continue
        path = os.path.join(found, name)
        target = os.path.realpath(entry.path)
        if not _within(target, memory_root):
            reason = f"a link pointing outside the memory directory: {target}"
            scan.skipped.append(SkippedFile(path=path, reason=reason))
        elif is_directory:
            _walk(path, target, memory_root, scan, visited, top=False)
        else:
            _read(path, target, scan)


def _is_memory_file_name(name: str) -> bool:
    """A markdown file other than the harness's index (a lock file never ends in .md)."""
    return name.endswith(".md") and name != _INDEX_FILE


def _read(path: str, real: str, scan: HarnessScan) -> None:
    """Parse the file at real, reported as path, into a memory or the reason it gives none."""
    try:
        with open(os.open(real, _OPEN_FLAGS), "rb") as file:
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode):
                scan.skipped.append(SkippedFile(path=path, reason="not a regular file"))
                return
            data = file.read()
    except OSError as error:
        reason = f"cannot read: {error.strerror or error}"
        scan.skipped.append(SkippedFile(path=path, reason=reason))
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text ({error.reason} at byte {error.start})"
        scan.skipped.append(SkippedFile(path=path, reason=reason))
        return
    scan.memories.append(_memory(path, text, status.st_mtime, scan))


def _memory(path: str, text: str, mtime: float, scan: HarnessScan) -> HarnessMemory:
    """The memory a file's text gives; front matter it cannot parse leaves the text all body."""
    fields: dict[str, str] = {}
    body = after_front_matter = text
    split = _split_front_matter(text)
    if split is not None:
        front_matter, after_front_matter = split
        parsed = _fields(front_matter)
        if isinstance(parsed, str):
            rescued = _fields(_quote_values(front_matter))
            parsed = parsed if isinstance(rescued, str) else rescued
        if isinstance(parsed, str):
            reason = f"unparseable front matter ({parsed}); read as a file without front matter"
            scan.notes.append(SkippedFile(path=path, reason=reason))
        else:
            fields, body = parsed, after_front_matter
    name = fields.get("name") or os.path.basename(path).removesuffix(".md")
    # Even when the front matter is kept as body, its fence is no description.
    description = fields.get("description") or _first_line(after_front_matter) or name
    return HarnessMemory(
        path=path,
        mtime=mtime,
        name=name,
        description=description,
        type=fields.get("type"),
        body=body,
        session_id=fields.get("originSessionId"),
        modified=fields.get("modified"),
    )


def _split_front_matter(text: str) -> tuple[str, str] | None:
    """The text between a first line `---` and the next `---` line, and the text after that."""
    first, newline, rest = text.partition("\n")
    closing = _CLOSING_FENCE.search(rest) if newline else None
    if not _FIRST_FENCE.fullmatch(first) or closing is None:
        return None
    return rest[: closing.start()], rest[closing.end() + 1 :]


def _fields(front_matter: str) -> dict[str, str] | str:
    """The fields this reader uses, as written; or why the front matter cannot give them."""
    try:
        root = yaml.compose(front_matter, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        return _problem(error)
    except RecursionError:
        # PyYAML composes nested collections recursively; one file must not end the scan.
        return "nested too deeply"
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        kind = "sequence" if isinstance(root, yaml.SequenceNode) else "scalar"
        return f"a YAML {kind}, not a mapping"
    top = _values(front_matter, root)
    metadata = _mapping_value(root, "metadata")
    fields = {} if metadata is None else _values(front_matter, metadata)
    fields = {key: fields[key] for key in _METADATA_FIELDS if key in fields}
    fields.update((key, top[key]) for key in _TOP_LEVEL_FIELDS if key in top)
    return fields


def _values(front_matter: str, mapping: yaml.MappingNode) -> dict[str, str]:
    """Every key with a non-null value, the value's text as written (a collection's source)."""
    values = {}
    for key, value in mapping.value:
        if not isinstance(key, yaml.ScalarNode) or value.tag == _NULL_TAG:
            continue
        if isinstance(value, yaml.ScalarNode):
            # The scalar's own text, so 007, 2026-01-02 or yes stay exactly as written.
            values[key.value] = value.value
        else:
            values[key.value] = front_matter[value.start_mark.index : value.end_mark.index]
    return values


def _mapping_value(mapping: yaml.MappingNode, name: str) -> yaml.MappingNode | None:
    found = None
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            found = value if isinstance(value, yaml.MappingNode) else None
    return found


def _problem(error: yaml.YAMLError) -> str:
    """One line saying what YAML objected to, with its line in the file when known."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        where = "" if error.problem_mark is None else f" on line {error.problem_mark.line + 2}"
        return f"{error.problem}{where}"
    return (str(error) or type(error).__name__).splitlines()[0]


def _quote_values(front_matter: str) -> str:
    """The front matter with each top-level `key: value` value double-quoted, colons and all."""
    lines = []
    for line in front_matter.split("\n"):
        match = _KEY_VALUE_LINE.fullmatch(line)
        if match is not None and not _KEEP_AS_WRITTEN.fullmatch(match["value"]):
            escaped = match["value"].replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match["key"]}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _first_line(body: str) -> str:
    """The body's first line with text, without its heading marks."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""
