"""Creating the data directory (`.lazy/`): with a .gitignore, so that git status stays clean.

Whatever first writes to the data directory creates it here: `lazy init`, the first save of
either embedded backend, the first token. Everything inside is the store's runtime state (the
database, its WAL and locks, the journal, tokens, the launch log), none of it for git, so a
directory created here ignores itself. One that already exists is left as it is: a team that
deleted the .gitignore on purpose does not get it back.
"""

from __future__ import annotations

import os
from pathlib import Path

GITIGNORE = ".gitignore"
GITIGNORE_TEXT = """\
# Written by lazy-memory when it created this directory: the store's runtime files (database,
# WAL, locks, journal, tokens, logs) stay out of git. Commit lazy.toml; share records through a
# postgres or remote store, or `lazy memory migrate`, not through git.
*
"""


def create_data_dir(directory: Path, mode: int = 0o777) -> None:
    """Make directory (and its parents) if it is missing, with a .gitignore that ignores all.

    OSError goes through for the caller to translate; mode is the directory's, before umask.
    """
    if directory.is_dir():
        return
    directory.mkdir(mode=mode, parents=True, exist_ok=True)
    write_gitignore(directory)


def write_gitignore(directory: Path) -> bool:
    """Write directory/.gitignore unless it exists (another process may be writing it now);
    whether this call wrote it."""
    try:
        descriptor = os.open(directory / GITIGNORE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(GITIGNORE_TEXT)
    return True
