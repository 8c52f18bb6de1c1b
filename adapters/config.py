"""Configuration: the project root, the data directory, lazy.toml, and LAZY_* overrides."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazy_memory.engine.errors import InvalidConfig

if TYPE_CHECKING:
    from lazy_memory.adapters.project_key import ProjectKey

CONFIG_FILE = "lazy.toml"
DEFAULT_BACKEND = "sqlite"
DEFAULT_WARN_BYTES = 4096
DEFAULT_MAX_BODY_BYTES = 64 * 1024
"""The largest body a save takes, in UTF-8 bytes (the engine's MAX_BODY_BYTES; a test holds
them equal): spelled out so that reading the configuration imports none of the models."""
DEFAULT_COMPACT_MODEL = "claude-haiku-4-5"
DEFAULT_COMPACT_TIMEOUT_SECONDS = 120.0
DEFAULT_POLL_SECONDS = 2.0
DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 5.0
"""How long a daemon connection may take to complete `initialize` with a valid token."""
DEFAULT_IDLE_TIMEOUT_SECONDS = 900.0
"""How long a daemon connection may send nothing, with no request running, before it closes."""
DEFAULT_MAX_CONNECTIONS = 256
"""Connections a daemon serves at once; one more is refused as soon as it is accepted."""
DEFAULT_CONNECT_TIMEOUT_SECONDS = 2.0
"""How long opening a network store (PostgreSQL, a remote daemon) may take before it fails."""
DEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0
"""How long a remote daemon may take to answer one request before its connection is dropped."""
CLAUDE_CODE_MEASURED_VERSION = "2.1.197"
"""The Claude Code release the harness limits below were measured on (tests/e2e/claude_code)."""
DEFAULT_HOOK_LIMIT_CHARS = 10_000
"""What Claude Code shows of a hook's output whole; past it the model gets a 2 KB preview."""
DEFAULT_TOOL_RESULT_LIMIT_CHARS = 500_000
"""The largest tool result a tool may declare (`anthropic/maxResultSizeChars`) and get whole."""
DEFAULT_HOOK_TIMEOUT_SECONDS = 10.0
"""How long the SessionStart hook may take in all before it prints the unavailable marker."""

_KNOWN_KEYS: dict[str, set[str]] = {
    "storage": {"backend", "data_dir", "pg_dsn", "project", "connect_timeout_seconds"},
    "memory": {"warn_bytes", "max_body_bytes"},
    "remote": {"address", "ca_file", "request_timeout_seconds"},
    "compact": {"model", "command", "timeout_seconds"},
    "engine": {
        "poll_seconds",
        "handshake_timeout_seconds",
        "idle_timeout_seconds",
        "max_connections",
    },
    "claude_code": {"hook_limit_chars", "tool_result_limit_chars", "hook_timeout_seconds"},
}


@dataclass(frozen=True)
class Settings:
    """Everything a client needs to open the store, after lazy.toml and the environment."""

    root: Path
    data_dir: Path
    backend: str = DEFAULT_BACKEND
    warn_bytes: int = DEFAULT_WARN_BYTES
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    actor: str | None = None
    task_id: str | None = None
    remote: str | None = None
    token: str | None = None
    tls_ca_file: Path | None = None
    pg_dsn: str | None = None
    project: str | None = None
    compact_model: str = DEFAULT_COMPACT_MODEL
    compact_command: str | None = None
    compact_timeout_seconds: float = DEFAULT_COMPACT_TIMEOUT_SECONDS
    poll_seconds: float = DEFAULT_POLL_SECONDS
    handshake_timeout_seconds: float = DEFAULT_HANDSHAKE_TIMEOUT_SECONDS
    idle_timeout_seconds: float = DEFAULT_IDLE_TIMEOUT_SECONDS
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    connect_timeout_seconds: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    hook_limit_chars: int = DEFAULT_HOOK_LIMIT_CHARS
    tool_result_limit_chars: int = DEFAULT_TOOL_RESULT_LIMIT_CHARS
    hook_timeout_seconds: float = DEFAULT_HOOK_TIMEOUT_SECONDS
    offline: bool = False
    warnings: tuple[str, ...] = field(default=())

    @property
    def project_key(self) -> str:
        """The key of this project's rows in a shared store: [storage] project (LAZY_PROJECT),
        else guessed from the git remote or the root's path (see guessed_project_key)."""
        return self.project or self.guessed_project_key.key

    @cached_property
    def guessed_project_key(self) -> ProjectKey:
        """The key adapters/project_key.py guesses for this root; asked only when needed."""
        from lazy_memory.adapters.project_key import guess_project_key

        return guess_project_key(self.root)


def task_id_from(environ: Mapping[str, str]) -> str | None:
    """The session's task id: None only when LAZY_TASK_ID is unset; an empty one is an agent."""
    # Never `or None`: that would make `LAZY_TASK_ID=` a builder, and identity fails closed.
    return environ.get("LAZY_TASK_ID")


def find_root(start: Path) -> Path:
    """The nearest ancestor of start (itself included) holding lazy.toml or .git, else start."""
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).exists() or (directory / ".git").exists():
            return directory
    return start


def load_settings(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Read lazy.toml at the project root, then apply LAZY_* environment overrides."""
    cwd = (cwd or Path.cwd()).resolve()
    environ = os.environ if environ is None else environ
    root = find_root(cwd)
    table, warnings = _read_config_file(root / CONFIG_FILE)
    storage = _section(table, "storage")
    memory = _section(table, "memory")
    remote = _section(table, "remote")
    compact = _section(table, "compact")
    engine = _section(table, "engine")
    claude_code = _section(table, "claude_code")

    data_dir = root / ".lazy"
    if "data_dir" in storage:
        data_dir = root / _string(storage["data_dir"], "storage.data_dir")
    if environ.get("LAZY_DATA"):
        data_dir = cwd / environ["LAZY_DATA"]

    backend = _string(storage.get("backend", DEFAULT_BACKEND), "storage.backend")
    backend = environ.get("LAZY_STORAGE") or backend

    warn_bytes = _positive_int(memory.get("warn_bytes", DEFAULT_WARN_BYTES), "memory.warn_bytes")
    max_body_bytes = _positive_int(
        memory.get("max_body_bytes", DEFAULT_MAX_BODY_BYTES), "memory.max_body_bytes"
    )

    remote_address = environ.get("LAZY_REMOTE") or remote.get("address")
    pg_dsn = environ.get("LAZY_PG_DSN") or storage.get("pg_dsn")
    project = environ.get("LAZY_PROJECT") or storage.get("project")
    ca_file = environ.get("LAZY_TLS_CA") or remote.get("ca_file")

    timeout = compact.get("timeout_seconds", DEFAULT_COMPACT_TIMEOUT_SECONDS)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise InvalidConfig(f"{root / CONFIG_FILE}: compact.timeout_seconds must be positive")
    poll_seconds = _positive_seconds(
        environ.get("LAZY_POLL_SECONDS") or engine.get("poll_seconds", DEFAULT_POLL_SECONDS),
        "engine.poll_seconds (LAZY_POLL_SECONDS)",
    )
    connect_timeout = _positive_seconds(
        environ.get("LAZY_CONNECT_TIMEOUT")
        or storage.get("connect_timeout_seconds", DEFAULT_CONNECT_TIMEOUT_SECONDS),
        "storage.connect_timeout_seconds (LAZY_CONNECT_TIMEOUT)",
    )

    return Settings(
        root=root,
        data_dir=data_dir,
        backend=backend,
        warn_bytes=warn_bytes,
        max_body_bytes=max_body_bytes,
        actor=environ.get("LAZY_ACTOR") or None,
        task_id=task_id_from(environ),
        remote=None if remote_address is None else _string(remote_address, "remote.address"),
        token=environ.get("LAZY_TOKEN") or None,
        tls_ca_file=None if ca_file is None else root / _string(ca_file, "remote.ca_file"),
        pg_dsn=None if pg_dsn is None else _string(pg_dsn, "storage.pg_dsn"),
        project=None if project is None else _string(project, "storage.project"),
        compact_model=_string(compact.get("model", DEFAULT_COMPACT_MODEL), "compact.model"),
        compact_command=(
            None if "command" not in compact else _string(compact["command"], "compact.command")
        ),
        compact_timeout_seconds=float(timeout),
        poll_seconds=poll_seconds,
        handshake_timeout_seconds=_positive_seconds(
            engine.get("handshake_timeout_seconds", DEFAULT_HANDSHAKE_TIMEOUT_SECONDS),
            "engine.handshake_timeout_seconds",
        ),
        idle_timeout_seconds=_positive_seconds(
            engine.get("idle_timeout_seconds", DEFAULT_IDLE_TIMEOUT_SECONDS),
            "engine.idle_timeout_seconds",
        ),
        max_connections=_positive_int(
            engine.get("max_connections", DEFAULT_MAX_CONNECTIONS), "engine.max_connections"
        ),
        connect_timeout_seconds=connect_timeout,
        request_timeout_seconds=_positive_seconds(
            remote.get("request_timeout_seconds", DEFAULT_REQUEST_TIMEOUT_SECONDS),
            "remote.request_timeout_seconds",
        ),
        hook_limit_chars=_positive_int(
            claude_code.get("hook_limit_chars", DEFAULT_HOOK_LIMIT_CHARS),
            "claude_code.hook_limit_chars",
        ),
        tool_result_limit_chars=_positive_int(
            claude_code.get("tool_result_limit_chars", DEFAULT_TOOL_RESULT_LIMIT_CHARS),
            "claude_code.tool_result_limit_chars",
        ),
        hook_timeout_seconds=_positive_seconds(
            claude_code.get("hook_timeout_seconds", DEFAULT_HOOK_TIMEOUT_SECONDS),
            "claude_code.hook_timeout_seconds",
        ),
        offline=environ.get("LAZY_OFFLINE", "") not in ("", "0"),
        warnings=tuple(warnings),
    )


def settings_or_defaults(
    cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Settings, InvalidConfig | None]:
    """The settings, or, when lazy.toml is bad, the defaults and the error that says why.

    For the processes a launch depends on (the hook, `lazy engine`, `lazy mcp`): they start
    anyway, the session's identity still taken from the environment, and serve the error.
    """
    try:
        return load_settings(cwd, environ), None
    except InvalidConfig as error:
        cwd = (cwd or Path.cwd()).resolve()
        environ = os.environ if environ is None else environ
        root = find_root(cwd)
        data_dir = cwd / environ["LAZY_DATA"] if environ.get("LAZY_DATA") else root / ".lazy"
        fallback = Settings(
            root=root,
            data_dir=data_dir,
            actor=environ.get("LAZY_ACTOR") or None,
            task_id=task_id_from(environ),
        )
        return fallback, error


def _read_config_file(path: Path) -> tuple[dict[str, Any], list[str]]:
    if not path.exists():
        return {}, []
    import tomllib  # only a project with a lazy.toml pays for the parser

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidConfig(f"cannot read {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise InvalidConfig(f"{path} is not valid TOML: {error}") from None
    warnings = []
    for section, value in table.items():
        if section not in _KNOWN_KEYS or not isinstance(value, dict):
            warnings.append(f"{path}: ignoring unknown section [{section}]")
            continue
        warnings.extend(
            f"{path}: ignoring unknown key {section}.{key}"
            for key in value
            if key not in _KNOWN_KEYS[section]
        )
    return table, warnings


def _section(table: dict[str, Any], name: str) -> dict[str, Any]:
    value = table.get(name, {})
    return value if isinstance(value, dict) else {}


def _positive_int(value: object, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InvalidConfig(f"{CONFIG_FILE}: {key} must be a positive integer")
    return value


def _positive_seconds(value: object, key: str) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = 0.0
    if isinstance(value, bool) or not seconds > 0:
        raise InvalidConfig(f"{CONFIG_FILE}: {key} must be a positive number of seconds")
    return seconds


def _string(value: object, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidConfig(f"{CONFIG_FILE}: {key} must be a non-empty string")
    return value
