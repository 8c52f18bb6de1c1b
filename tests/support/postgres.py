"""A real PostgreSQL server for the tests: initdb and pg_ctl on a temporary directory.

One server per test session (so one per xdist worker: a test that stops it stops only its
worker's), on a free loopback port, with trust authentication and no fsync. Tests share it
and keep apart by project key (`fresh_project`), which is cheaper than a database each and
exercises the keying of rows by project. As root, the server's
binaries run as the `postgres` user: initdb refuses to run as root.

Without the binaries the tests that need the server skip, saying what to install; under CI
they fail (tests/support/components.py).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import asyncpg

_START_ATTEMPTS = 3
_projects = itertools.count(1)


class ServerCommandFailed(Exception):
    """initdb, pg_ctl or createdb exited non-zero; the message holds what it said."""


@dataclass
class PostgresServer:
    """A running test server: its DSN, and how to stop, start and restart it."""

    binaries: Path
    directory: Path
    port: int

    @property
    def dsn(self) -> str:
        """The DSN of the server's default database, over TCP on the loopback interface."""
        return self.dsn_for("postgres")

    def dsn_for(self, database: str) -> str:
        """The DSN of one database on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def pg_ctl(self, *arguments: str) -> None:
        """Run pg_ctl on this server's data directory, as the user that owns it."""
        _run(
            self.binaries / "pg_ctl",
            "-D",
            str(self.directory / "data"),
            "-l",
            str(self.directory / "server.log"),
            *arguments,
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=300"
        )
        self.pg_ctl("-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server: every connection is closed."""
        self.pg_ctl("-m", "fast", "-w", "stop")

    def restart(self) -> None:
        """Stop and start again on the same port: every connection is closed."""
        self.stop()
        self.start()

    def create_database(self, name: str, *options: str) -> str:
        """Create an empty database (createdb's options given, such as an encoding) and
        return its DSN."""
        _run(
            self.binaries / "createdb",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            *options,
            name,
        )
        return self.dsn_for(name)


def fresh_project(label: str = "test") -> str:
    """A project key no other test of this session uses."""
    return f"{label}-{os.getpid()}-{next(_projects)}"


def postgres_binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory, or None."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda path: [int(part) for part in path.parts[-3].split(".") if part.isdigit()],
    )
    if candidates:
        return candidates[-1].parent
    initdb = shutil.which("initdb")
    return None if initdb is None else Path(initdb).parent


def start_cluster(binaries: Path, directory: Path) -> PostgresServer:
    """A new cluster in directory, started; the server's user must be able to reach directory
    (as root: each folder above it must let others through). Without pytest, for bench/ too."""
    _give_to_server_user(directory)
    _run(
        binaries / "initdb",
        "-D",
        str(directory / "data"),
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
    )
    return _started(binaries, directory)


def _started(binaries: Path, directory: Path) -> PostgresServer:
    """Start on a free port, trying another if someone takes it between the probe and start."""
    for attempt in range(_START_ATTEMPTS):
        server = PostgresServer(binaries, directory, unused_port())
        try:
            server.start()
        except ServerCommandFailed:
            if attempt == _START_ATTEMPTS - 1:
                raise
            continue
        return server
    raise AssertionError("unreachable")


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _server_user_prefix() -> list[str]:
    """As root, run the server's binaries as `postgres`; as anyone else, as themselves."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _give_to_server_user(directory: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")


def _run(*command: str | Path) -> None:
    completed = subprocess.run(
        [*_server_user_prefix(), *map(str, command)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise ServerCommandFailed(
            f"{' '.join(completed.args)} exited {completed.returncode}: "
            f"{completed.stderr.strip() or completed.stdout.strip()}"
        )


async def wait_for_backend(
    connection: asyncpg.Connection, condition: str, seconds: float = 30.0
) -> int:
    """The pid of another backend of this database matching condition, once there is one."""
    for _ in range(int(seconds / 0.05)):
        pid = await connection.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            f"AND pid <> pg_backend_pid() AND {condition}"
        )
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no backend matched {condition} in {seconds} s")
