"""What `lazy init` writes to lazy.toml: the backend it is asked for and the project's key."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lazy_memory.adapters import BACKENDS
from lazy_memory.rpc.usage import UsageError

if TYPE_CHECKING:
    from lazy_memory.adapters.config import Settings


@dataclass(frozen=True)
class Requested:
    """The storage `lazy init` was asked to configure; None where lazy.toml says nothing."""

    backend: str
    dsn: str | None = None
    remote: str | None = None
    given: bool = False
    """Whether the command line named any of them (else: the default, sqlite)."""


def add_arguments(init: argparse.ArgumentParser) -> None:
    """Add --backend, --dsn and --remote to `lazy init`."""
    init.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the store lazy.toml names (default sqlite; --dsn implies postgres, --remote remote)",
    )
    init.add_argument(
        "--dsn",
        metavar="DSN",
        help="the PostgreSQL database, postgresql://USER@HOST:PORT/DATABASE, without a password "
        "(lazy.toml is committed: put the password in ~/.pgpass or PGPASSWORD)",
    )
    init.add_argument(
        "--remote",
        metavar="ADDRESS",
        help="the daemon to use, unix:PATH, tcp:HOST:PORT or tls:HOST:PORT (its token goes in "
        "LAZY_TOKEN, never in lazy.toml)",
    )


def requested(arguments: argparse.Namespace) -> Requested:
    """The storage the options ask for, checked; UsageError for a contradiction."""
    if arguments.dsn is not None and arguments.remote is not None:
        raise UsageError("--dsn is for a postgres store and --remote for a daemon: give one")
    implied = "postgres" if arguments.dsn is not None else "remote" if arguments.remote else None
    backend = arguments.backend or implied or "sqlite"
    if implied is not None and backend != implied:
        flag = "--dsn" if arguments.dsn is not None else "--remote"
        raise UsageError(f"{flag} is for --backend {implied}, not --backend {backend}")
    if backend == "postgres" and arguments.dsn is None and not os.environ.get("LAZY_PG_DSN"):
        raise UsageError("--backend postgres needs the database: give --dsn DSN")
    if backend == "remote" and arguments.remote is None and not os.environ.get("LAZY_REMOTE"):
        raise UsageError("--backend remote needs the daemon's address: give --remote ADDRESS")
    if arguments.dsn is not None:
        _check_dsn(arguments.dsn)
    if arguments.remote is not None:
        from lazy_memory.adapters.address import parse_address

        parse_address(arguments.remote)  # InvalidConfig names the forms there are
    given = arguments.backend is not None or implied is not None
    return Requested(backend, arguments.dsn, arguments.remote, given)


def check_unchanged(wanted: Requested, settings: Settings, config: str) -> None:
    """Refuse options that an existing lazy.toml contradicts: init never rewrites it."""
    if not wanted.given:
        return
    differences = [
        f"{key} {'nothing' if have is None else repr(have)}, not {want!r}"
        for key, want, have in (
            ("[storage] backend", wanted.backend, settings.backend),
            ("[storage] pg_dsn", wanted.dsn, settings.pg_dsn),
            ("[remote] address", wanted.remote, settings.remote),
        )
        if want is not None and want != have
    ]
    if differences:
        raise UsageError(
            f"{config} already exists and says {'; '.join(differences)}; lazy init never "
            "rewrites it: edit it there"
        )


def config_text(wanted: Requested, project: str | None, folder: str) -> str:
    """lazy.toml for a new project: the backend asked for and the project's key; with no key
    (none every checkout would share: adapters/project_key.py), a comment that asks for one."""
    storage = [f"backend = {_toml(wanted.backend)}  # {' | '.join(BACKENDS)}"]
    storage.append(
        '# data_dir = ".lazy"       # where an embedded store lives, relative to this file'
    )
    if project is not None:
        storage.append(
            "# The key of this project's records in a shared (postgres) store: the same in "
            "every checkout,\n# unlike any other project's, and kept when the repository moves."
        )
        storage.append(f"project = {_toml(project)}")
    else:
        storage.append(
            "# The key of this project's records in a shared (postgres) store. The repository "
            "has no git\n# remote to take it from, and a checkout's path is no key: another "
            "checkout has another.\n# Name the project, the same for the whole team, before a "
            "postgres store is shared:"
        )
        storage.append(f"# project = {_toml('your-team/' + folder)}")
    if wanted.dsn is not None:
        storage.append(f"pg_dsn = {_toml(wanted.dsn)}")
    elif wanted.backend == "postgres":
        storage.append("# pg_dsn is taken from LAZY_PG_DSN")
    sections = [
        "# lazy-memory configuration; environment variables (LAZY_*) override these keys.\n",
        "[storage]\n" + "\n".join(storage) + "\n",
    ]
    if wanted.backend == "remote":
        address = (
            "# address is taken from LAZY_REMOTE"
            if wanted.remote is None
            else f"address = {_toml(wanted.remote)}"
        )
        sections.append(
            f"[remote]\n{address}\n"
            '# ca_file = "ca.pem"        # the CA a tls: daemon\'s certificate is checked against '
            "(or LAZY_TLS_CA)\n"
        )
    sections.append(
        "[memory]\n"
        "warn_bytes = 4096          # advisory size of the memory section injected into launches\n"
    )
    sections.append(
        "[compact]\n"
        '# model = "claude-haiku-4-5"        # the model `lazy memory compact` asks\n'
        '# command = "my-summarizer"         # or a command: prompt on stdin, summary on stdout\n'
    )
    return "\n".join(sections)


def _check_dsn(dsn: str) -> None:
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(dsn)
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
        raise UsageError(
            f"--dsn {dsn!r} is not a PostgreSQL DSN: use postgresql://USER@HOST:PORT/DATABASE"
        )
    if parts.password is not None or "password" in parse_qs(parts.query):
        raise UsageError(
            "--dsn carries a password, and lazy.toml is meant to be committed: give the DSN "
            "without it and put the password in ~/.pgpass or PGPASSWORD (or the whole DSN in "
            "LAZY_PG_DSN)"
        )


def _toml(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but for DEL, which TOML must escape."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
