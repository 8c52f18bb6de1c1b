"""`lazy mcp`'s start as a harness meets it: from spawn to `initialize` and `tools/list` answered.

Claude Code in `-p` mode sends its first model request without waiting for MCP servers (with
`alwaysLoad` it waits a few seconds at most), so this time decides whether the lazy tools are in
the first request at all. It is measured as whole processes from a wheel install: the checkout
built into a wheel and installed into a virtual environment of its own (its bytecode compiled,
as pip does), the dependencies taken from this interpreter's site-packages. The floor is
`python -c "import sqlite3"` with that same interpreter, run in turn with `lazy mcp` (floor,
server, floor, server, ...), so a machine whose speed drifts moves both alike. The client writes
`initialize` as soon as it has spawned the server, as a harness does, then `tools/list`.

Nothing on that path reads the store, so the time must not grow with it: it is measured with no
store at all and at the run's sizes; and once more with both cores kept busy by a bounded CPU
load beside it, the machine an orchestrator starts many sessions on.
"""

from __future__ import annotations

import compileall
import json
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from bench.load import busy_cores
from bench.plan import Plan
from bench.report import Measurement, Target, median
from bench.stores import Store

TARGET = Target(3, times_floor=True)
"""From spawn to `tools/list` answered: at most 3 times the floor (the first-turn issue)."""
TOOLS = ("lazy_memory_recall", "lazy_memory_save", "lazy_search")
SIZES = (1_000, 100_000)
"""The store sizes measured, beside no store at all, unless --sizes says otherwise."""
BUSY_RECORDS = 1_000
"""The store size measured again with both cores busy."""

_REPO = Path(__file__).resolve().parent.parent
_FLOOR_WHAT = 'python -c "import sqlite3", the same interpreter, in turn with it, median'
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
_LIST = [
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def start_up(plan: Plan, stores: Sequence[Store], empty: Store) -> list[Measurement]:
    """The start of `lazy mcp` on empty (no store yet) and on each of stores, quiet, then on
    the store of BUSY_RECORDS (or the smallest) with both cores busy."""
    with wheel_install(plan.workdir) as python:
        rows = [_row(plan, python, store, busy=False) for store in (empty, *stores)]
        loaded = min(stores, key=lambda store: abs(store.records - BUSY_RECORDS))
        with busy_cores(600):
            rows.append(_row(plan, python, loaded, busy=True))
    return rows


@contextmanager
def wheel_install(workdir: Path) -> Iterator[Path]:
    """The Python of a virtual environment with this checkout installed from a wheel."""
    wheels = workdir / "wheel"
    venv = workdir / "wheel-venv"
    _quietly(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, _REPO)
    _quietly(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    [wheel] = wheels.glob("lazy_memory-*.whl")
    # Forced: run from a checkout, pip would take the checkout's own metadata for an install.
    install = ("install", "--no-deps", "--force-reinstall", "-q", wheel)
    _quietly(sys.executable, "-m", "pip", "--python", python, *install)
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    packages = Path(_quietly(python, "-c", where).strip())
    compileall.compile_dir(packages / "lazy_memory", quiet=1)
    # The dependencies from this interpreter's site-packages, as plain path entries: its .pth
    # files (an editable install of this checkout among them) are not run.
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()}
    (packages / "bench-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    yield python


def _row(plan: Plan, python: Path, store: Store, busy: bool) -> Measurement:
    floors, servers = [], []
    lazy = [str(python.with_name("lazy")), "mcp"]
    environment = store.environment()
    with (plan.workdir / "mcp-start-stderr.log").open("ab") as log:
        for run in range(plan.repeat + 1):
            floor = _floor_ms(python, environment)
            server = time_to_tools_ms(lazy, environment, store.root, log)
            if run:  # the first pair warms the caches
                floors.append(floor)
                servers.append(server)
    ratios = sorted(server / floor for server, floor in zip(servers, floors, strict=True))
    load = ", both cores busy" if busy else ""
    return Measurement(
        f"`lazy mcp` from spawn to initialize and tools/list answered{load}, median",
        store.backend,
        store.records,
        median(servers),
        "ms",
        floor=median(floors),
        floor_what=_FLOOR_WHAT,
        target=TARGET,
        samples=len(servers),
        note=f"wheel install; pair by pair {ratios[0]:.1f}-{ratios[-1]:.1f} x the floor, "
        f"median {median(ratios):.1f} x",
    )


def _quietly(*command: str | Path) -> str:
    """What command printed; its failure raises with what it said."""
    done = subprocess.run(list(map(str, command)), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed: {done.stderr.strip()}")
    return done.stdout


def _floor_ms(python: Path, environment: Mapping[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([str(python), "-c", "import sqlite3"], env=dict(environment), check=True)
    return (time.perf_counter() - started) * 1000


def time_to_tools_ms(
    command: list[str], environment: Mapping[str, str], cwd: Path, log: IO[bytes]
) -> float:
    """Milliseconds from spawning an MCP server to its answer listing lazy's tools."""
    started = time.perf_counter()
    server = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        env=dict(environment),
        cwd=cwd,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        _send(server.stdin, [_INITIALIZE])
        _answer(server.stdout, 1)
        _send(server.stdin, _LIST)
        listed = _answer(server.stdout, 2)
        elapsed = (time.perf_counter() - started) * 1000
        names = tuple(tool["name"] for tool in listed["result"]["tools"])
        if names != TOOLS:
            raise RuntimeError(f"lazy mcp listed {names}, not {TOOLS}")
        server.stdin.close()
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return elapsed


def _send(stdin: IO[bytes], messages: list[dict[str, Any]]) -> None:
    stdin.write(b"".join(json.dumps(message).encode() + b"\n" for message in messages))
    stdin.flush()


def _answer(stdout: IO[bytes], message_id: int) -> dict[str, Any]:
    while line := stdout.readline():
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == message_id:
            if "result" not in message:
                raise RuntimeError(f"lazy mcp answered {message}")
            return message
    raise RuntimeError("lazy mcp closed its output before answering")


def empty_store(workdir: Path) -> Store:
    """A project with no store yet: what the first session of a new project starts on."""
    root = Path(tempfile.mkdtemp(prefix="empty-", dir=workdir))
    (root / ".git").mkdir()
    return Store("sqlite", 0, root)
