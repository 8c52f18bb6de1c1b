"""The memory MCP servers `python -m bench --peers` measures: how each is installed and driven.

Each peer is installed (pinned) into CACHE, outside the repository; bench/peers.py starts it
and times it on the workload. A step that fails raises PeerMissing with the reason.

- reference: `@modelcontextprotocol/server-memory` from npm (a knowledge graph in one JSON
  Lines file): create_entities, or add_observations when the name exists; search_nodes;
  open_nodes. It is filled through create_entities, 500 entities a call.
- basic-memory (PyPI; needs Python 3.12 or later, in a venv of its own): write_note
  (overwrite), search_notes (full text), read_note by title. It is filled the way it reads a
  folder of notes: the records are written as markdown files and `basic-memory reindex`
  indexes them before the server starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from bench.engine import SEARCH_QUERIES
from lazy_memory.engine.records import RecordContent

CACHE = Path(os.environ.get("LAZY_BENCH_PEERS", Path.home() / ".cache" / "lazy-memory" / "peers"))
"""Where peers are installed (LAZY_BENCH_PEERS overrides): never inside the repository."""

REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"
REFERENCE_VERSION = "2026.8.31"
BASIC_MEMORY_VERSION = "0.24.1"

_INSTALL_SECONDS = 900
_FILL_BATCH = 500

NextCall = Callable[[], tuple[str, dict[str, Any]]]
"""The next call of an operation: the tool and its arguments."""


class PeerMissing(Exception):
    """The peer cannot be installed or started here; the message says why."""


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
