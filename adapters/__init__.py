"""The outside world: storage backends, configuration, and the wiring that builds a service."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lazy_memory.engine.constants import SQLITE_FILE
from lazy_memory.engine.errors import InvalidConfig, LazyMemoryError

if TYPE_CHECKING:
    # Imported where they are used: `lazy --help` and every command's parser need only this
    # module's names, and the engine's models cost a command start tens of milliseconds.
    from lazy_memory.adapters.config import Settings
    from lazy_memory.adapters.launch.state import LaunchState
    from lazy_memory.engine.identity import Identity
    from lazy_memory.engine.importing import HarnessScan
    from lazy_memory.engine.ports import Storage
    from lazy_memory.engine.service import MemoryService

BACKENDS = ("sqlite", "files", "postgres", "remote")
"""Every storage backend by the name `[storage] backend` and LAZY_STORAGE use."""
EMBEDDED_BACKENDS = ("sqlite", "files")
"""The backends whose store is files in the data directory, made by the first write."""


async def open_storage(settings: Settings) -> Storage:
    """Open the configured backend; its driver is imported only here, when it is used."""
    if settings.backend == "sqlite":
        from lazy_memory.adapters.sqlite.storage import SqliteStorage

        return await SqliteStorage.open(settings.data_dir / SQLITE_FILE)
    if settings.backend == "files":
        from lazy_memory.adapters.files.storage import FileStorage

        return await FileStorage.open(settings.data_dir, settings.poll_seconds)
    if settings.backend == "postgres":
        from lazy_memory.adapters.postgres.storage import PostgresStorage

        if settings.pg_dsn is None:
            raise InvalidConfig(
                "the postgres backend needs a DSN: set LAZY_PG_DSN or [storage] pg_dsn, "
                "like postgresql://user@host:5432/database"
            )
        return await PostgresStorage.open(
            settings.pg_dsn, settings.project_key, settings.connect_timeout_seconds
        )
    if settings.backend == "remote":
        from lazy_memory.adapters.remote.storage import RemoteStorage

        if settings.remote is None:
            raise InvalidConfig("the remote backend needs an address: set LAZY_REMOTE")
        return await RemoteStorage.open(
            settings.remote,
            settings.token,
            settings.tls_ca_file,
            connect_timeout=settings.connect_timeout_seconds,
            request_timeout=settings.request_timeout_seconds,
        )
    raise InvalidConfig(
        f"unknown storage backend {settings.backend!r}: use one of {', '.join(BACKENDS)}"
    )


def read_launch_state(settings: Settings, trusted_compact: str | None) -> LaunchState:
    """What a launch's section is assembled from, read without the engine from a SQLite or
    files store, for the launch hook (adapters/launch/state.py); NotRead when only the engine
    can read it."""
    from lazy_memory.adapters.launch.state import launch_state

    return launch_state(settings, trusted_compact)


async def open_storage_anyway(settings: Settings, config_error: LazyMemoryError | None) -> Storage:
    """The configured store; if it cannot be opened, one that serves why until it can.

    For the processes a launch depends on (`lazy engine`, `lazy mcp`): see
    adapters/reopening.py. With config_error (a bad lazy.toml) the configuration is read
    again at each try, so fixing the file is enough.
    """
    from lazy_memory.adapters.config import load_settings

    async def opener() -> Storage:
        return await open_storage(settings if config_error is None else load_settings())

    try:
        return await opener()
    except LazyMemoryError as error:
        # Imported only now: a store that opens never pays for the storage contract's models.
        from lazy_memory.adapters.reopening import reopening_store

        return reopening_store(opener, error)


def service_factory(settings: Settings, storage: Storage) -> Callable[[Identity], MemoryService]:
    """Build services over one storage, one per session identity, configured from settings."""
    from lazy_memory.adapters.clock import SystemClock
    from lazy_memory.adapters.summarizers.choice import open_summarizer
    from lazy_memory.engine.service import MemoryService

    summarizer = open_summarizer(settings)
    harness = _HarnessOnDemand(settings)
    clock = SystemClock()

    def new_service(identity: Identity) -> MemoryService:
        return MemoryService(
            storage,
            identity,
            clock,
            warn_bytes=settings.warn_bytes,
            summarizer=summarizer,
            harness=harness,
            hook_limit_chars=settings.hook_limit_chars,
            page_limit_chars=settings.tool_result_limit_chars,
            max_body_bytes=settings.max_body_bytes,
        )

    return new_service


async def open_service(settings: Settings, identity: Identity) -> MemoryService:
    """Build the MemoryService a client talks to, from configuration and a session identity."""
    return service_factory(settings, await open_storage(settings))(identity)


class _HarnessOnDemand:
    """The Claude Code memory reader, imported (with YAML) only when a scan is asked for."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def scan(self) -> HarnessScan:
        """Scan this project's harness memory directories."""
        from lazy_memory.adapters.claude_code.memories import ClaudeCodeMemory

        return await ClaudeCodeMemory(self._settings.root, self._settings.data_dir).scan()
