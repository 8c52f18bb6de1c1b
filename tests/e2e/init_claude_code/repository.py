"""Git run in a test's repository as its user would, with no global configuration: the
repository's own files and ignore rules are all it sees (conftest.py makes the repository)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(project: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(project), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org",
            "PATH": "/usr/bin:/bin",
            "HOME": str(project.parent / "home"),
        },
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
