"""The hook's light render gives, byte for byte, what the engine gives, in every state.

The hook (rpc/cli/hook.py) answers without the engine: on a SQLite or files store it reads the
store's plain rows and renders them with the engine's one renderer, without pydantic, asyncio
or MemoryService. Here the real hook runs as Claude Code runs it, right after another process
wrote to the store, beside run_hook (the engine's path, what the hook did before) on the same
store: stdout, stderr and the launch log's entry must be the same bytes, for a builder and an
agent, on both backends, in each state a launch meets. Where the light render can read the
store it must not have imported the models, asyncio or the service; a store or a compact that
only the engine can read (and report) is handed to it, and still gives the same bytes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lazy_memory.adapters import open_storage
from lazy_memory.adapters.config import Settings
from lazy_memory.engine.records import Actor, ActorKind, Operation, RecordContent, RecordType
from tests.support.unreadable_rows import damage_files, damage_sqlite

LIGHT = (
    "import json, sys; from lazy_memory.rpc.cli import main; "
    "status = main(['memory', 'context', '--hook']); "
    "open(sys.argv[1], 'w').write(json.dumps(sorted(sys.modules))); sys.exit(status)"
)
"""The hook as `lazy` runs it, telling which modules it imported in a file of its own."""
COMMANDS = (
    "import json, sys; from lazy_memory.rpc.cli import main; "
    "sys.exit(next(filter(None, map(main, json.loads(sys.argv[1]))), 0))"
)
"""`lazy` commands run one after another in one process, up to the first that fails: a state's
set-up, which these tests do not compare and which would start a process per record (the
write a moment before each launch is still a process of its own, `Store.save`)."""
ENGINE = (
    "import asyncio, sys; from lazy_memory.rpc.cli.hook import run_hook; "
    "sys.exit(asyncio.run(run_hook()))"
)
"""The hook through the engine."""
HEAVY = {"pydantic", "asyncio", "lazy_memory.engine.service", "lazy_memory.engine.records"}
"""What the light render never imports."""
MARKER = b"MEMORY INDEX UNAVAILABLE ("
AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
HOSTILE = [
    RecordContent(
        name="title\x1b]0;pwned\x07",
        type=RecordType.USER,
        description="clears \x1b[2J\x1b[H, retitles \x9b31m",
        body="b",
    ),
    RecordContent(
        name="rlo\u202egnp.exe",
        type=RecordType.FEEDBACK,
        description="\u202eevil\u202c \u2066isolate\u2069 zero\u200bwidth\ufeff tab\there",
        body="b",
    ),
]


class Store:
    """A project with a store of one backend, and how to run things in it."""

    def __init__(self, project: Path, data_dir: Path, backend: str, session: dict[str, str]):
        self.project = project
        self.data_dir = data_dir
        self.backend = backend
        self.environment = {**os.environ, "LAZY_STORAGE": backend, "LAZY_DATA": str(data_dir)}
        self.session = session

    def lazy(self, *arguments: str) -> subprocess.CompletedProcess[bytes]:
        done = self._run(["-m", "lazy_memory.rpc.cli", *arguments], self.environment)
        assert done.returncode == 0, done.stderr
        return done

    def lazy_in_one_process(self, *commands: list[str]) -> None:
        done = self._run(["-c", COMMANDS, json.dumps(commands)], self.environment)
        assert done.returncode == 0, done.stderr

    def save(self, name: str, description: str, type_: str = "project") -> None:
        self.lazy(*saving(name, description, type_))

    def configure(self, toml: str) -> None:
        (self.project / "lazy.toml").write_text(toml, encoding="utf-8")

    def light(self, tmp_path: Path) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
        imported = tmp_path / "modules.json"
        done = self._run(["-c", LIGHT, str(imported)], {**self.environment, **self.session})
        return done, set(json.loads(imported.read_text()))

    def engine(self) -> subprocess.CompletedProcess[bytes]:
        return self._run(["-c", ENGINE], {**self.environment, **self.session})

    def last_launch(self) -> dict[str, object] | None:
        log = self.data_dir / "launches.jsonl"
        if not log.exists():
            return None
        launch: dict[str, object] = json.loads(log.read_text().splitlines()[-1])
        del launch["at"]
        return launch

    def forget_kept_sections(self) -> None:
        for kept in self.data_dir.glob("launch-cache-*.json"):
            kept.unlink()

    def _run(
        self, arguments: list[str], environment: dict[str, str]
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, *arguments],
            cwd=self.project,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )


def saving(name: str, description: str, type_: str = "project") -> list[str]:
    """The `lazy` command that saves one record."""
    return ["memory", "save", name, "-t", type_, "-d", description, "--body", "b"]


def seeded(store: Store, count: int = 5, *then: list[str]) -> None:
    """`count` records, then any further commands, in one process."""
    notes = [
        saving(f"note-{n:02d}", f"what note {n} says, in a line of its own") for n in range(count)
    ]
    store.lazy_in_one_process(*notes, *then)


def empty(store: Store) -> None:
    """No store at all: the empty section, and nothing created."""


def plain(store: Store) -> None:
    seeded(store)


def compacted(store: Store) -> None:
    """A compact, a record written and one updated since it, and one removed since."""
    seeded(
        store,
        5,
        ["memory", "compact", "--mechanical"],
        saving("fresh", "written after the compact", "user"),
        saving("note-01", "updated after the compact"),
        ["memory", "rm", "note-02"],
    )


def unreadable_compact(store: Store) -> None:
    seeded(store)
    if store.backend == "sqlite":
        import sqlite3

        with sqlite3.connect(store.data_dir / "memory.db") as connection:
            connection.execute("INSERT INTO compact (slot, content) VALUES (1, '{garbage')")
    else:
        (store.data_dir / "memory-compact.json").write_text("{garbage", encoding="utf-8")


def over_warn_bytes(store: Store) -> None:
    store.configure("[memory]\nwarn_bytes = 300\n")
    seeded(store)


def over_the_hook_limit(store: Store) -> None:
    store.configure("[claude_code]\nhook_limit_chars = 1500\n")
    seeded(store, 40)


def over_the_hook_limit_in_pages(store: Store) -> None:
    store.configure("[claude_code]\nhook_limit_chars = 1500\ntool_result_limit_chars = 1500\n")
    seeded(store, 40)


def unreadable_store(store: Store) -> None:
    seeded(store)
    broken(store)


def broken(store: Store) -> None:
    """A store damaged behind lazy-memory's back: neither backend can read it."""
    name = "memory.db" if store.backend == "sqlite" else "memory-history.json"
    for path in store.data_dir.glob(f"{name}*"):
        path.unlink()
    (store.data_dir / name).write_bytes(b"this is no store\n" * 100)


def unreadable_row(store: Store) -> None:
    """One record whose type is not one of the four, as another tool may leave it."""
    seeded(store)
    damaged(store, "type")


def undecodable_row(store: Store) -> None:
    """One record whose description is not UTF-8, as an older tool may leave it."""
    seeded(store)
    damaged(store, "text")


def damaged(store: Store, kind: str) -> None:
    if store.backend == "sqlite":
        damage_sqlite(store.data_dir / "memory.db", "note-03", kind)
    else:
        damage_files(store.data_dir, "note-03", kind)


def hostile_text(store: Store) -> None:
    seeded(store, 2)

    async def write() -> None:
        settings = Settings(root=store.project, data_dir=store.data_dir, backend=store.backend)
        storage = await open_storage(settings)
        try:
            for record in HOSTILE:
                actor = Actor(kind=ActorKind.SYSTEM, detail="import")
                await storage.save_record(record, actor=actor, at=AT, operation=Operation.IMPORT)
        finally:
            await storage.aclose()

    asyncio.run(write())


LIGHT_STATES: list[Callable[[Store], None]] = [
    empty,
    plain,
    compacted,
    over_warn_bytes,
    over_the_hook_limit,
    over_the_hook_limit_in_pages,
    hostile_text,
    unreadable_row,
    undecodable_row,
]
ENGINE_STATES: list[Callable[[Store], None]] = [unreadable_compact, unreadable_store]
SESSIONS = {"builder": {}, "agent": {"LAZY_TASK_ID": "t-1"}}


@pytest.fixture(params=["sqlite", "files"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=list(SESSIONS))
def store(
    request: pytest.FixtureRequest, backend: str, project: Path, isolated_environment: Path
) -> Store:
    return Store(project, isolated_environment, backend, SESSIONS[request.param])


def after_a_write(store: Store, tmp_path: Path, state: Callable[[Store], None]) -> None:
    """The state, a hook that keeps its section, then a write by another process: the hook
    must read the store again, as it does at a session start right after any write."""
    state(store)
    store.light(tmp_path)
    if state is unreadable_store:
        # The write a moment before the damage, the hook after both.
        for path in store.data_dir.glob("memory*"):
            path.unlink()
        plain(store)
        store.save("after", "written by another process just before the launch")
        broken(store)
    elif state is not empty:
        store.save("after", "written by another process just before the launch")


def assert_the_same(
    light: subprocess.CompletedProcess[bytes], engine: subprocess.CompletedProcess[bytes]
) -> None:
    assert (light.returncode, engine.returncode) == (0, 0)
    assert light.stdout == engine.stdout
    assert light.stderr == engine.stderr


@pytest.mark.parametrize("state", LIGHT_STATES, ids=[state.__name__ for state in LIGHT_STATES])
def test_the_light_render_is_the_engine_s_without_the_models(
    store: Store, tmp_path: Path, state: Callable[[Store], None]
) -> None:
    after_a_write(store, tmp_path, state)

    light, imported = store.light(tmp_path)
    light_launch = store.last_launch()
    store.forget_kept_sections()
    engine = store.engine()

    assert_the_same(light, engine)
    assert not HEAVY & imported, HEAVY & imported
    assert store.last_launch() == light_launch
    if state is not empty:
        assert b"- after (project): written by another process" in light.stdout


@pytest.mark.parametrize("state", ENGINE_STATES, ids=[state.__name__ for state in ENGINE_STATES])
def test_what_only_the_engine_reads_is_handed_to_it(
    store: Store, tmp_path: Path, state: Callable[[Store], None]
) -> None:
    after_a_write(store, tmp_path, state)

    light, imported = store.light(tmp_path)
    store.forget_kept_sections()
    engine = store.engine()

    assert_the_same(light, engine)
    assert "asyncio" in imported  # the engine read it
    if state is unreadable_store:
        assert light.stdout.startswith(MARKER)
    else:
        assert b"compact cannot be read" in light.stderr
        assert b"- after (project): written by another process" in light.stdout


def test_the_states_say_what_they_promise(store: Store, tmp_path: Path) -> None:
    """The states above are what they are named for (so the comparisons cover each one)."""
    outputs = {}
    for state in [*LIGHT_STATES, *ENGINE_STATES]:
        for path in store.data_dir.glob("*"):
            path.unlink()
        (store.project / "lazy.toml").unlink(missing_ok=True)
        state(store)
        outputs[state.__name__] = store.light(tmp_path)[0]
        store.forget_kept_sections()
    role_is_agent = bool(store.session)

    assert b"No memory records have been saved" in outputs["empty"].stdout
    assert b"## Written since that summary" in outputs["compacted"].stdout
    assert b"## Removed since that summary\n- note-02\n" in outputs["compacted"].stdout
    assert b"over the advisory size threshold" in outputs["over_warn_bytes"].stderr
    assert (b"run `lazy doctor`" in outputs["over_warn_bytes"].stdout) is not role_is_agent
    assert b"lazy_memory_recall(), which returns every record's line in one call" in (
        outputs["over_the_hook_limit"].stdout
    )
    assert b"lazy_memory_recall(page=1) to lazy_memory_recall(page=" in (
        outputs["over_the_hook_limit_in_pages"].stdout
    )
    assert b"\\x1b]0;pwned\\x07" in outputs["hostile_text"].stdout
    assert b"\\u202eevil\\u202c" in outputs["hostile_text"].stdout
    assert b"\x1b" not in outputs["hostile_text"].stdout
    assert outputs["unreadable_store"].stdout.startswith(MARKER)
    for state in ("unreadable_row", "undecodable_row"):
        section = outputs[state].stdout
        assert b"- note-02 (project)" in section
        assert b"- note-03" not in section
        assert section.endswith(
            b"- note-04 (project): what note 4 says, in a line of its own\n"
            b"(1 memory record could not be read: 'note-03'; `lazy doctor` says why)\n"
        )
