"""What each `lazy init --claude-code` created or replaced, kept so `--remove` undoes exactly that.

The note (`<data>/claude-code-setup.json`, private to the user: it may hold a copy of their
local settings) keeps, per project root, the record the install functions fill in
(setup.py), and under `files` each file lazy wrote: its text before lazy first
touched it (`original`, null when lazy created it) and a digest of the text lazy last wrote
(`written`). A file still as lazy left it is put back byte for byte from `original`; one
edited since, or one whose original is unknown (it held lazy's entries before the note
did), has lazy's entries taken out where they stand instead.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from lazy_memory.adapters.claude_code.files import read_document, write_text
from lazy_memory.adapters.claude_code.setup import JsonObject
from lazy_memory.adapters.json_text import new_text
from lazy_memory.engine.errors import InvalidConfig

NOTE_FILE = "claude-code-setup.json"
FILES_KEY = "files"


class Note:
    """The records of the set-ups done with this data directory, by project root."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / NOTE_FILE

    def record(self, root: Path) -> JsonObject | None:
        """The record of the set-up at root, None if there is none."""
        record = self._projects().get(str(root))
        return record if isinstance(record, dict) else None

    def save(self, root: Path, record: JsonObject | None) -> None:
        """Keep record for root (None or empty: forget it); the file goes with the last one."""
        projects = self._projects()
        if record:
            projects[str(root)] = record
        else:
            projects.pop(str(root), None)
        if projects:
            write_text(self.path, new_text({"version": 1, "projects": projects}), private=True)
        else:
            self.path.unlink(missing_ok=True)

    def _projects(self) -> JsonObject:
        try:
            note = read_document(self.path).value
        except InvalidConfig:
            return {}  # lazy's own note, unreadable: removal then infers, as with no note
        projects = (note or {}).get("projects")
        return projects if isinstance(projects, dict) else {}


def note_written(
    record: JsonObject, name: Path, before: str | None, after: str | None, *, pristine: bool
) -> None:
    """Keep in record what a set-up wrote to the file name, and what it held before lazy.

    pristine: before holds nothing of lazy's, so it is the text to put back.
    """
    files: dict[str, Any] = record.setdefault(FILES_KEY, {})
    entry = files.get(str(name))
    kept = (
        isinstance(entry, dict) and "original" in entry and entry.get("written") == digest(before)
    )
    if kept:
        assert isinstance(entry, dict)
        new_entry = {"original": entry["original"]}
    elif pristine:
        if before == after:
            files.pop(str(name), None)  # lazy left it as it was: nothing of it to undo
            return
        new_entry = {"original": before}
    else:
        new_entry = {}
    new_entry["written"] = digest(after)
    files[str(name)] = new_entry


def original_text(
    record: JsonObject | None, name: Path, current: str | None
) -> tuple[bool, str | None]:
    """(True, the text before lazy) if the file is still exactly as lazy left it; else (False,
    None): its original is unknown, or it was edited since."""
    entry = ((record or {}).get(FILES_KEY) or {}).get(str(name))
    if not isinstance(entry, dict) or "original" not in entry:
        return False, None
    if entry.get("written") != digest(current):
        return False, None
    original = entry["original"]
    return True, original if isinstance(original, str) else None


def edited_since(record: JsonObject | None, name: Path, current: str | None) -> bool:
    """Whether lazy wrote the file and it has been changed since."""
    entry = ((record or {}).get(FILES_KEY) or {}).get(str(name))
    return isinstance(entry, dict) and "written" in entry and entry["written"] != digest(current)


def digest(text: str | None) -> str | None:
    """A file text's fingerprint (None for no file)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()
