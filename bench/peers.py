"""`python -m bench --peers`: `lazy mcp` beside other memory MCP servers, in the same run.

Each peer is installed (pinned) into a cache outside the repository, started over stdio by
the same MCP SDK client as `lazy mcp`, given its own empty data folder, filled with the same
5,000 corpus records, and timed on the same workload as bench/mcp_tools.py: create (a save
of a new or existing record), search (the same ten queries), read (a corpus record by name).
The report quotes each peer's p50 beside its own MCP ping, then the peer's p50 over
`lazy mcp`'s (SQLite) for each operation: the target is at least 20 x the reference server.

- reference: `@modelcontextprotocol/server-memory` from npm (a knowledge graph in one JSON
  Lines file): create_entities, or add_observations when the name exists; search_nodes;
  open_nodes. It is filled through create_entities, 500 entities a call.
- basic-memory (PyPI; needs Python 3.12 or later, in a venv of its own): write_note
  (overwrite), search_notes (full text), read_note by title. It is filled the way it reads a
  folder of notes: the records are written as markdown files and `basic-memory reindex`
  indexes them before the server starts.

A peer that cannot be installed is reported with verdict `missing` and the reason.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path
from typing import Any, Protocol

from mcp import StdioServerParameters

from bench.client import timings
from bench.corpus import realistic_records
from bench.engine import SEARCH_QUERIES
from bench.mcp_tools import TARGET_RECORDS, call_tool, mcp_session, time_calls, tools
from bench.plan import Fixtures, Plan
from bench.report import Measurement, Target, median, missing
from lazy_memory.engine.records import RecordContent

CACHE = Path(os.environ.get("LAZY_BENCH_PEERS", Path.home() / ".cache" / "lazy-memory" / "peers"))
"""Where peers are installed (LAZY_BENCH_PEERS overrides): never inside the repository."""

REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"
REFERENCE_VERSION = "2026.8.31"
BASIC_MEMORY_VERSION = "0.24.1"

OPERATIONS = {"create": "lazy_memory_save", "search": "lazy_search", "read": "lazy_memory_recall"}
"""The workload's operations and the `lazy mcp` tool each one is."""

_RATIO_TARGETS = {"reference": Target(20, at_least=True)}
_INSTALL_SECONDS = 900
_FILL_BATCH = 500

NextCall = Callable[[], tuple[str, dict[str, Any]]]
"""The next call of an operation: the tool and its arguments."""


class PeerMissing(Exception):
    """The peer cannot be installed or started here; the message says why."""


class Peer(Protocol):
    """A memory MCP server to install, fill and drive through the workload's operations."""

    name: str
    version: str

    def install(self) -> None:
        """Install the pinned version into CACHE unless it is there; raise PeerMissing."""

    def server(self, data: Path) -> StdioServerParameters:
        """How to start it over stdio with its store in the empty folder data."""

    def prepare(self, data: Path, corpus: Sequence[RecordContent]) -> None:
        """Fill the store before the server starts (nothing, if it is filled through tools)."""

    def fill_calls(self, corpus: Sequence[RecordContent]) -> list[tuple[str, dict[str, Any]]]:
        """Tool calls that fill the running server with corpus (none if prepare did)."""

    def calls(
        self, corpus: Sequence[RecordContent], saves: Sequence[RecordContent]
    ) -> dict[str, tuple[str, NextCall]]:
        """For each operation, the tool(s) it calls, as the report names them, and its calls."""


@dataclass
class ReferenceServer:
    """The MCP reference memory server (npm), a knowledge graph in a JSON Lines file."""

    name: str = "reference"
    version: str = REFERENCE_VERSION

    @property
    def folder(self) -> Path:
        """Its npm prefix in the cache."""
        return CACHE / f"server-memory-{self.version}"

    @property
    def entry_point(self) -> Path:
        """The installed server's script."""
        package = self.folder / "node_modules" / REFERENCE_PACKAGE
        return package / "dist" / "index.js"

    def install(self) -> None:
        """npm install the pinned package into its own prefix."""
        for program in ("node", "npm"):
            if shutil.which(program) is None:
                raise PeerMissing(f"{program} is not on PATH")
        if not self.entry_point.exists():
            _run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(self.folder),
                    f"{REFERENCE_PACKAGE}@{self.version}",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                ],
                f"npm install {REFERENCE_PACKAGE}@{self.version}",
            )

    def server(self, data: Path) -> StdioServerParameters:
        """node on the installed script, the graph in data/memory.jsonl."""
        environment = dict(os.environ, MEMORY_FILE_PATH=str(data / "memory.jsonl"))
        return StdioServerParameters(
            command="node", args=[str(self.entry_point)], env=environment, cwd=data
        )

    def prepare(self, data: Path, corpus: Sequence[RecordContent]) -> None:
        """Nothing: the server fills itself through create_entities."""

    def fill_calls(self, corpus: Sequence[RecordContent]) -> list[tuple[str, dict[str, Any]]]:
        """create_entities of the corpus, _FILL_BATCH entities a call."""
        return [
            ("create_entities", {"entities": [_entity(content) for content in batch]})
            for batch in (
                corpus[start : start + _FILL_BATCH] for start in range(0, len(corpus), _FILL_BATCH)
            )
        ]

    def calls(
        self, corpus: Sequence[RecordContent], saves: Sequence[RecordContent]
    ) -> dict[str, tuple[str, NextCall]]:
        """create_entities (add_observations for a known name), search_nodes, open_nodes."""
        known = {content.name for content in corpus}
        pending = iter(saves)

        def create() -> tuple[str, dict[str, Any]]:
            content = next(pending)
            if content.name in known:
                observations = [{"entityName": content.name, "contents": _observations(content)}]
                return "add_observations", {"observations": observations}
            known.add(content.name)
            return "create_entities", {"entities": [_entity(content)]}

        names, queries = cycle(c.name for c in corpus), cycle(SEARCH_QUERIES)
        return {
            "create": ("create_entities or add_observations", create),
            "search": ("search_nodes", lambda: ("search_nodes", {"query": next(queries)})),
            "read": ("open_nodes", lambda: ("open_nodes", {"names": [next(names)]})),
        }


@dataclass
class BasicMemory:
    """basic-memory (PyPI): markdown notes in a folder, indexed in SQLite."""

    name: str = "basic-memory"
    version: str = BASIC_MEMORY_VERSION

    @property
    def folder(self) -> Path:
        """Its venv in the cache."""
        return CACHE / f"basic-memory-{self.version}"

    @property
    def program(self) -> Path:
        """The installed `basic-memory` command."""
        return self.folder / "bin" / "basic-memory"

    def install(self) -> None:
        """A venv on a Python 3.12 or later, and pip install the pinned version into it."""
        if self.program.exists():
            return
        python = _python_at_least((3, 12))
        if python is None:
            raise PeerMissing(
                f"basic-memory {self.version} needs Python 3.12 or later, and none was found "
                "(set LAZY_BENCH_PEER_PYTHON to one)"
            )
        shutil.rmtree(self.folder, ignore_errors=True)
        _run([python, "-m", "venv", str(self.folder)], f"{python} -m venv")
        _run(
            [
                str(self.folder / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                f"basic-memory=={self.version}",
            ],
            f"pip install basic-memory=={self.version}",
        )

    def server(self, data: Path) -> StdioServerParameters:
        """`basic-memory mcp` with its notes and its config (and database) under data."""
        return StdioServerParameters(
            command=str(self.program), args=["mcp"], env=self._environment(data), cwd=data
        )

    def prepare(self, data: Path, corpus: Sequence[RecordContent]) -> None:
        """The corpus as one markdown note per record, then `basic-memory reindex`."""
        for content in corpus:
            folder = data / "notes" / content.type.value
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{content.name}.md").write_text(
                f"---\ntitle: {content.name}\ntype: {content.type.value}\n---\n\n"
                f"{_text(content)}\n",
                encoding="utf-8",
            )
        _run(
            [str(self.program), "reindex", "--search"],
            "basic-memory reindex",
            environment=self._environment(data),
            cwd=data,
        )

    def fill_calls(self, corpus: Sequence[RecordContent]) -> list[tuple[str, dict[str, Any]]]:
        """None: prepare indexed the notes."""
        return []

    def calls(
        self, corpus: Sequence[RecordContent], saves: Sequence[RecordContent]
    ) -> dict[str, tuple[str, NextCall]]:
        """write_note (overwrite), search_notes (full text), read_note by title."""
        pending = iter(saves)

        def write() -> tuple[str, dict[str, Any]]:
            content = next(pending)
            arguments = {
                "title": content.name,
                "content": _text(content),
                "directory": content.type.value,
                "note_type": content.type.value,
                "overwrite": True,
            }
            return "write_note", arguments

        def search() -> tuple[str, dict[str, Any]]:
            return "search_notes", {"query": next(queries), "search_type": "text"}

        names, queries = cycle(c.name for c in corpus), cycle(SEARCH_QUERIES)
        return {
            "create": ("write_note", write),
            "search": ("search_notes", search),
            "read": ("read_note", lambda: ("read_note", {"identifier": next(names)})),
        }

    def _environment(self, data: Path) -> dict[str, str]:
        return dict(
            os.environ,
            BASIC_MEMORY_HOME=str(data / "notes"),
            BASIC_MEMORY_CONFIG_DIR=str(data / "config"),
            BASIC_MEMORY_NO_PROMOS="1",
        )


PEERS: tuple[Peer, ...] = (ReferenceServer(), BasicMemory())


async def compare(plan: Plan, peers: Sequence[Peer] = PEERS) -> list[Measurement]:
    """`lazy mcp` at TARGET_RECORDS (SQLite), each peer at the same size, and the ratios."""
    records = min(TARGET_RECORDS, max(plan.sizes))
    fixtures = Fixtures(plan)
    lazy = await tools(plan, await fixtures.store("sqlite", records))
    lazy_p50 = {
        operation: next(m.value for m in lazy if m.what.startswith(f"MCP {tool}"))
        for operation, tool in OPERATIONS.items()
    }
    rows = list(lazy)
    for peer in peers:
        rows += await _peer_rows(plan, peer, records, lazy_p50)
    return rows


async def _peer_rows(
    plan: Plan, peer: Peer, records: int, lazy_p50: dict[str, float]
) -> list[Measurement]:
    label = f"{peer.name} {peer.version}"
    try:
        await asyncio.to_thread(peer.install)
        timed = await _drive(plan, peer, records)
    except PeerMissing as error:
        return [
            missing(f"peer {label}: {operation}, p50", peer.name, records, str(error))
            for operation in OPERATIONS
        ] + [
            missing(f"{operation}: {peer.name} p50 / lazy mcp p50", "sqlite", records, str(error))
            for operation in OPERATIONS
        ]
    ping, fill_seconds, samples = timed
    rows = [
        Measurement(
            f"peer {label}: fill the store",
            peer.name,
            records,
            fill_seconds,
            "s",
            note="fill: the corpus written through the peer's own path (see bench/peers.py), "
            "untimed by any target",
        )
    ]
    for operation, (tool, times) in samples.items():
        rows.append(
            Measurement(
                f"peer {label}: {operation} ({tool}), p50",
                peer.name,
                records,
                median(times),
                "ms",
                floor=ping,
                floor_what="MCP ping round trip to the same server, p50",
                samples=len(times),
            )
        )
    for operation, (_tool, times) in samples.items():
        rows.append(
            Measurement(
                f"{operation}: {peer.name} p50 / lazy mcp p50",
                "sqlite",
                records,
                median(times) / lazy_p50[operation],
                "x",
                # The target is set at TARGET_RECORDS: a small store says nothing of scale.
                target=_RATIO_TARGETS.get(peer.name) if records == TARGET_RECORDS else None,
                note="peer ratios: the peer's p50 over `lazy mcp`'s (SQLite, same store size, "
                "same run) for the same operation: how many times faster `lazy mcp` is",
            )
        )
    return rows


async def _drive(
    plan: Plan, peer: Peer, records: int
) -> tuple[float, float, dict[str, tuple[str, list[float]]]]:
    """The peer's ping p50, the fill's seconds and each operation's samples, on a new store."""
    data = plan.workdir / f"peer-{peer.name}"
    data.mkdir()
    corpus = realistic_records(records)
    saves = realistic_records(plan.requests + 1, seed=2)
    started = time.perf_counter()
    await asyncio.to_thread(peer.prepare, data, corpus)
    try:
        async with mcp_session(plan, peer.server(data)) as session:
            for tool, arguments in peer.fill_calls(corpus):
                await call_tool(session, tool, arguments)
            fill_seconds = time.perf_counter() - started
            ping = median(await timings(session.send_ping, plan.requests, plan.budget_seconds))
            samples = {}
            for operation, (tool, next_call) in peer.calls(corpus, saves).items():
                times = await time_calls(session, next_call, plan.requests, plan.budget_seconds)
                samples[operation] = (tool, times)
    except Exception as error:
        # A server that dies or refuses a call (the SDK raises McpError, anyio wraps errors in
        # groups) is reported as not measured, with why, and the run goes on to the next peer.
        raise PeerMissing(f"it failed to run: {error!r}"[:500]) from error
    return ping, fill_seconds, samples


def _entity(content: RecordContent) -> dict[str, Any]:
    return {
        "name": content.name,
        "entityType": content.type.value,
        "observations": _observations(content),
    }


def _observations(content: RecordContent) -> list[str]:
    return [content.description, content.body] if content.body else [content.description]


def _text(content: RecordContent) -> str:
    return f"{content.description}\n\n{content.body}" if content.body else content.description


def _python_at_least(version: tuple[int, int]) -> str | None:
    """A Python interpreter of at least version: LAZY_BENCH_PEER_PYTHON, PATH, then pyenv's."""
    candidates = [os.environ.get("LAZY_BENCH_PEER_PYTHON", "")]
    minors = range(14, version[1] - 1, -1)
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in minors]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted((str(p) for p in pyenv.glob("3.*/bin/python3")), reverse=True)
    check = f"import sys; sys.exit(sys.version_info < {version!r})"
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run([candidate, "-c", check], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return candidate
    return None


def _run(
    command: list[str],
    what: str,
    environment: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> None:
    """Run an installation or preparation step; its failure makes the peer missing."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_INSTALL_SECONDS,
            env=environment,
            cwd=cwd,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PeerMissing(f"{what} failed: {error}") from error
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PeerMissing(f"{what} exited {done.returncode}: {' / '.join(tail)}")
