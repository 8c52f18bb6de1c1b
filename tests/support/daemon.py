"""Start a real `lazy engine --listen` daemon for a test, make tokens for it, and read its
memory."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lazy_memory.adapters.tokens import TokenStore

READY = "lazy-memory daemon listening on "
LAZY = [sys.executable, "-m", "lazy_memory.rpc.cli"]


@dataclass
class Daemon:
    """A running daemon: its process, the address it listens on, and what it logged."""

    process: subprocess.Popen[str]
    address: str
    log: list[str] = field(default_factory=list)

    def stop(self) -> int:
        """SIGTERM, then the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


def add_token(data_dir: Path, role: str, name: str | None = None, task: str | None = None) -> str:
    """Create a token in the daemon's data directory and return its secret.

    In this process, through the token store `lazy engine token add` writes with, so the file
    is the same; a subprocess would cost a second of interpreter start-up for every daemon a
    test starts. The command itself is tested through the real CLI
    (tests/e2e/daemon/test_daemon_tokens.py, tests/reliability/test_token_secrets.py).
    """
    return TokenStore.in_data_dir(data_dir).add(role, name or None, task or None)[1]


@contextmanager
def running_daemon(
    data_dir: Path,
    listen: str,
    *extra: str,
    cwd: Path | None = None,
    environment: Mapping[str, str] | None = None,
) -> Iterator[Daemon]:
    """A daemon on listen (tcp port 0 allowed) serving the store in data_dir, stopped after;
    in cwd, if given (a project whose lazy.toml it reads); over SQLite unless environment
    names another store."""
    process = subprocess.Popen(
        [*LAZY, "engine", "--listen", listen, *extra],
        cwd=cwd,
        env={
            **os.environ,
            "LAZY_DATA": str(data_dir),
            "LAZY_STORAGE": "sqlite",
            **(environment or {}),
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    log: list[str] = []
    address = ""
    for line in process.stderr:
        log.append(line)
        if line.startswith(READY):
            address = line[len(READY) :].strip()
            break
    if not address:
        process.wait(timeout=30)
        raise RuntimeError(f"the daemon did not start: {''.join(log)}")
    daemon = Daemon(process, address, log)
    # Keep reading its log so a chatty daemon never blocks on a full pipe.
    threading.Thread(target=lambda: log.extend(process.stderr or ()), daemon=True).start()
    try:
        yield daemon
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def rss_kib(daemon: Daemon) -> int:
    """The daemon's resident set size, from /proc."""
    status = Path(f"/proc/{daemon.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1])


async def settled_rss(daemon: Daemon) -> int:
    """The daemon's RSS once it has stopped falling (the daemon frees within a second)."""
    last = rss_kib(daemon)
    for _ in range(20):
        await asyncio.sleep(1.0)
        now = rss_kib(daemon)
        if now >= last:
            return now
        last = now
    return last


async def wait_for_log(daemon: Daemon, text: str) -> None:
    """Wait until the daemon has logged text, for 30 s at most."""
    for _ in range(300):
        if text in "".join(daemon.log):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the daemon never logged {text!r}; it logged {''.join(daemon.log)}")
