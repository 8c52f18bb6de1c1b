"""A project's key in a shared store (PostgreSQL): what keeps two projects' rows apart.

Two checkouts of one repository should share a key, and two projects that happen to share a
folder name must not. So, when lazy.toml names no key, it is guessed from the git remote
(`origin`, else the first one), normalised so that the SSH and HTTPS spellings of one
repository agree and credentials never appear, plus the project's folder within the
repository when that is not its top; without a remote, it is the project root's absolute
path, which is this checkout's alone (per_checkout). `lazy init` writes a guess from a remote
to lazy.toml, where the team can commit it; a path it does not write, and says why.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lazy_memory.adapters.config import CONFIG_FILE

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings

_GIT_TIMEOUT_SECONDS = 2.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>.+)$")
"""`git@github.com:org/repo.git`: git's scp-like form of an SSH remote."""


@dataclass(frozen=True)
class ProjectKey:
    """A guessed project key, and where it came from (for doctor and init to say)."""

    key: str
    source: str
    """`the git remote NAME`, or `the project's path` when there is none."""
    per_checkout: bool = False
    """True for a path: another checkout, or a clone on another machine, gets another key, and
    another project that happens to sit at the same path on another machine gets this one."""


def guess_project_key(root: Path) -> ProjectKey:
    """The key of the project at root, from its git remote, else its absolute path."""
    remote = _git_remote(root)
    if remote is not None:
        name, url = remote
        prefix = _git(root, "rev-parse", "--show-prefix") or ""
        key = "/".join(part for part in (normalised_remote(url), prefix.strip("/")) if part)
        return ProjectKey(key, f"the git remote {name}")
    return ProjectKey(str(root.resolve()), "the project's path", per_checkout=True)


def project_key_warning(settings: Settings) -> str | None:
    """What doctor and init say when a postgres store's key had to be guessed, else None."""
    if settings.backend != "postgres" or settings.project is not None:
        return None
    guess = settings.guessed_project_key
    if guess.per_checkout:
        return (
            f"{CONFIG_FILE} names no [storage] project, and the repository has no git remote to "
            f"take one from, so this project's key in the postgres store is this checkout's path, "
            f"{guess.key!r}: another checkout gets another key. {name_the_project(settings)}"
        )
    return (
        f"{CONFIG_FILE} names no [storage] project, so this project's key in the postgres store "
        f"is guessed from {guess.source}: {guess.key!r}. Write `project = {json.dumps(guess.key)}` "
        f"under [storage] in {CONFIG_FILE} and commit it, so that every checkout uses the same "
        f"key (records saved under another key, such as the folder name {settings.root.name!r} "
        "older versions used, stay under that one)"
    )


def name_the_project(settings: Settings) -> str:
    """What to do when no key can be guessed that every checkout shares."""
    example = json.dumps(f"your-team/{settings.root.name}", ensure_ascii=False)
    return (
        f"Name the project under [storage] in {CONFIG_FILE}, the same for the whole team "
        f"(`project = {example}`), and commit it before the store is shared"
    )


def normalised_remote(url: str) -> str:
    """`host/owner/repo` for any spelling of one remote: no scheme, user, password, port or
    `.git`; a local path stays a path."""
    url = url.strip()
    scp = _SCP_LIKE.match(url) if "://" not in url else None
    if scp is not None:
        host, path = scp.group("host"), scp.group("path")
    elif "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or ""), parts.path
    else:
        host, path = "", url
    path = path.rstrip("/").removesuffix(".git").rstrip("/")
    if not host:
        return path
    return f"{host.lower()}/{path.lstrip('/')}"


def _git_remote(root: Path) -> tuple[str, str] | None:
    # --local: a remote in the user's global config belongs to no repository.
    listing = _git(root, "config", "--local", "--includes", "--get-regexp", r"^remote\..*\.url$")
    if not listing:
        return None
    remotes: dict[str, str] = {}
    for line in listing.splitlines():
        key, _, url = line.partition(" ")
        name = key.removeprefix("remote.").removesuffix(".url")
        if url and name not in remotes:
            remotes[name] = url
    if not remotes:
        return None
    name = "origin" if "origin" in remotes else next(iter(remotes))
    return name, remotes[name]


def _git(root: Path, *arguments: str) -> str | None:
    """git's output in root, or None when there is no git, no repository, or it fails."""
    try:
        finished = subprocess.run(
            ["git", "-C", str(root), *arguments],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return finished.stdout.strip() if finished.returncode == 0 else None
