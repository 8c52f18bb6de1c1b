"""Claude Code's project files as `lazy init --claude-code` reads and writes them.

Each file is read as text and as the JSON object it holds; a file that is not a JSON object
stops the whole set-up untouched. What lazy changes is spliced into the text
(adapters/json_text.py), so the rest of the file keeps its bytes; a new file is written as
two-space JSON. Writes are atomic (a temporary file in the same folder, renamed over the old
one, its mode kept; a symlinked file stays a symlink). See plan.py for what is
planned and note.py for how `--remove` undoes it.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from lazy_memory.adapters.claude_code.hook import prints_marker
from lazy_memory.adapters.claude_code.setup import (
    AUTO_MEMORY_KEY,
    SERVER_NAME,
    JsonObject,
    lazy_hook_commands,
    lazy_hook_matchers,
    misses_sources,
)
from lazy_memory.engine.errors import InvalidConfig

SETTINGS = Path(".claude") / "settings.json"
"""The project's shared settings: the hook and autoMemoryEnabled go here."""
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
"""The user's own settings for the project: Claude Code honours a `.mcp.json` approval only
here or in user settings, never from the shared file a repository brings along."""
MCP = Path(".mcp.json")
CLAUDE_DIR = Path(".claude")


@dataclass(frozen=True)
class InstalledHook:
    """lazy's hook as `.claude/settings.json` holds it, for doctor to say what sessions get."""

    found: bool
    missing_matcher: str | None = None
    """A matcher on lazy's group that misses SessionStart sources (None: it fires on all)."""
    falls_back: bool = True
    """Whether its command prints the UNAVAILABLE marker when lazy cannot run (an older
    lazy's prints nothing then)."""
    error: str | None = None
    """Why the settings file cannot be read."""


@dataclass(frozen=True)
class Document:
    """A JSON file as it is: its text and the object it holds (both None: no such file)."""

    text: str | None
    value: JsonObject | None


@dataclass
class FileChange:
    """One file of a plan: its text before and after (None: no such file)."""

    path: Path
    before: str | None
    after: str | None

    @property
    def status(self) -> str:
        """created, changed, unchanged or deleted."""
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "created"
        return "deleted" if self.after is None else "changed"


@dataclass
class Plan:
    """What a set-up or a removal writes, with one human line per change."""

    root: Path
    files: list[FileChange] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    """What happened to each of lazy's entries (hook, mcp_server, approval, auto_memory, ...)."""

    @property
    def changed(self) -> bool:
        """Whether applying the plan writes anything."""
        return any(change.status != "unchanged" for change in self.files)


def read_document(path: Path) -> Document:
    """The JSON object in path and its text; InvalidConfig for anything but an object."""
    text = read_text(path)
    if text is None:
        return Document(None, None)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidConfig(f"{path} is not valid JSON ({error}); left as it is") from None
    if not isinstance(value, dict):
        raise InvalidConfig(f"{path} does not hold a JSON object; left as it is")
    return Document(text, value)


def read_object(path: Path) -> JsonObject | None:
    """The JSON object in path, None if there is no file; InvalidConfig for anything else."""
    return read_document(path).value


def read_text(path: Path) -> str | None:
    """path's text exactly (line endings kept), None if there is no file."""
    try:
        with path.open(encoding="utf-8", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidConfig(f"cannot read {path}: {error}") from None


def write_text(path: Path, text: str, *, private: bool = False) -> None:
    """Write text to path atomically, keeping the file's mode (a new one: 0600 if private)."""
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, as any editor would make it
    temporary = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def apply(plan: Plan) -> None:
    """Write, or delete, every file the plan changes."""
    for change in plan.files:
        if change.status in ("created", "changed") and change.after is not None:
            write_text(change.path, change.after)
        elif change.status == "deleted":
            change.path.unlink(missing_ok=True)


def is_set_up(root: Path) -> bool:
    """Whether the project's settings already hold lazy's SessionStart hook."""
    settings = read_object(root / SETTINGS)
    return settings is not None and bool(lazy_hook_commands(settings))


def installed_hook(root: Path) -> InstalledHook:
    """What of lazy's hook the project's settings hold."""
    try:
        settings = read_object(root / SETTINGS) or {}
    except InvalidConfig as error:
        return InstalledHook(found=False, error=error.message)
    commands = lazy_hook_commands(settings)
    if not commands:
        return InstalledHook(found=False)
    missing = [m for m in lazy_hook_matchers(settings) if misses_sources(m)]
    return InstalledHook(
        found=True,
        missing_matcher=str(missing[0]) if missing else None,
        falls_back=all(map(prints_marker, commands)),
    )


def auto_memory_setting(root: Path, name: Path = SETTINGS) -> object:
    """autoMemoryEnabled as a settings file holds it (None when unset)."""
    return (read_object(root / name) or {}).get(AUTO_MEMORY_KEY)


def remove_empty_claude_folder(root: Path, record: JsonObject | None) -> bool:
    """Remove `.claude/` if lazy created it and nothing is left in it."""
    if record is None or not record.get("claude_dir"):
        return False
    try:
        (root / CLAUDE_DIR).rmdir()
    except OSError:  # not empty, or gone already: either way not lazy's to remove
        return False
    return True


def project_mcp_server(cwd: Path) -> object:
    """The `lazy` entry of the `.mcp.json` Claude Code started in cwd loads: the nearest one,
    in cwd or a folder above, that names it (None if none does, or one cannot be read)."""
    for folder in (cwd, *cwd.parents):
        try:
            mcp = read_object(folder / MCP)
        except InvalidConfig:
            return None  # Claude Code cannot read it either: lazy's own entry stands in
        servers = None if mcp is None else mcp.get("mcpServers")
        if isinstance(servers, dict) and SERVER_NAME in servers:
            return servers[SERVER_NAME]
    return None
