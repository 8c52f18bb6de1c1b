"""Configuration: the project root, the data directory, lazy.toml, and LAZY_* overrides.

Each setting's default is written once, on its Settings field (most as a DEFAULT_* constant
here, the [memory] ones and the tool result limit in engine/constants.py); its lazy.toml key,
LAZY_* variable and check once, in _FILE_SETTINGS. The module stays import-light: the launch
hook reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from lazy_memory.engine.constants import DEFAULT_WARN_BYTES
from lazy_memory.engine.constants import MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES

# What a tool result shows whole (measured with the hook's limit below) is the engine's too: a
# section fitted to the hook's limit names the pages recall cuts at it.
from lazy_memory.engine.constants import TOOL_RESULT_LIMIT_CHARS as DEFAULT_TOOL_RESULT_LIMIT_CHARS
from lazy_memory.engine.errors import InvalidConfig

if TYPE_CHECKING:
    from lazy_memory.adapters.project_key import ProjectKey

CONFIG_FILE = "lazy.toml"
DEFAULT_BACKEND = "sqlite"
DEFAULT_COMPACT_MODEL = "claude-haiku-4-5"
DEFAULT_COMPACT_TIMEOUT_SECONDS = 120.0
DEFAULT_POLL_SECONDS = 2.0
DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 5.0
"""How long a daemon connection may take to complete `initialize` with a valid token."""
DEFAULT_IDLE_TIMEOUT_SECONDS = 900.0
"""How long a daemon connection may send nothing, with no request running, before it closes."""
DEFAULT_MAX_CONNECTIONS = 256
"""Connections with a valid token a daemon serves at once; one more is refused at initialize."""
DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS = 1024
"""Connections a daemon holds before their token: past it, the oldest is dropped for the new."""
DEFAULT_CONNECT_TIMEOUT_SECONDS = 2.0
"""How long opening a network store (PostgreSQL, a remote daemon) may take before it fails."""
DEFAULT_REQUEST_TIMEOUT_SECONDS = 30.0
"""How long a remote daemon may take to answer one request before its connection is dropped."""
CLAUDE_CODE_MEASURED_VERSION = "2.1.332"
"""The Claude Code release the harness limits below were measured on (tests/e2e/claude_code)."""
CLAUDE_CODE_OLDER_VERSION = "2.1.197"
"""The older release the set-up is also tested on (tests/e2e/claude_code; .ci/run installs it)."""
DEFAULT_HOOK_LIMIT_CHARS = 10_000
"""What Claude Code shows of a hook's output whole; past it the model gets a 2 KB preview."""
DEFAULT_HOOK_TIMEOUT_SECONDS = 10.0
"""How long the SessionStart hook may take in all before it prints the unavailable marker."""


class Settings(NamedTuple):
    """Everything a client needs to open the store, after lazy.toml and the environment.

    A NamedTuple rather than a dataclass: the launch hook reads it at every session start,
    and the dataclasses module (with the inspect module it imports) costs that start a fifth
    of what a bare Python process does.
    """

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
    max_unauthenticated_connections: int = DEFAULT_MAX_UNAUTHENTICATED_CONNECTIONS
    connect_timeout_seconds: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    request_timeout_seconds: float = DEFAULT_REQUEST_TIMEOUT_SECONDS
    hook_limit_chars: int = DEFAULT_HOOK_LIMIT_CHARS
    tool_result_limit_chars: int = DEFAULT_TOOL_RESULT_LIMIT_CHARS
    hook_timeout_seconds: float = DEFAULT_HOOK_TIMEOUT_SECONDS
    offline: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def project_key(self) -> str:
        """The key of this project's rows in a shared store: [storage] project (LAZY_PROJECT),
        else guessed from the git remote or the root's path (see guessed_project_key)."""
        return self.project or self.guessed_project_key.key

    @property
    def guessed_project_key(self) -> ProjectKey:
        """The key adapters/project_key.py guesses for this root; asked only when needed."""
        return _guessed_project_key(self.root)


@cache
def _guessed_project_key(root: Path) -> ProjectKey:
    """guess_project_key(root), asked once per root a process meets (it reads git's config)."""
    from lazy_memory.adapters.project_key import guess_project_key

    return guess_project_key(root)


HOOK_WORDS = ("memory", "context", "--hook")
"""lazy's arguments in the SessionStart hook: written into Claude Code's settings by
adapters/claude_code/hook.py, matched there to find lazy's own hook, and answered by the CLI
(rpc/cli/__init__.py) before it builds a parser. Here, beside the hook's other settings,
because every start of lazy imports this module anyway."""
TASK_ID_VARIABLE = "LAZY_TASK_ID"
"""The task id an orchestrator gives an agent's session; set at all, it makes an agent."""


def task_id_from(environ: Mapping[str, str]) -> str | None:
    """The session's task id: None only when LAZY_TASK_ID is unset; an empty one is an agent."""
    # Never `or None`: that would make `LAZY_TASK_ID=` a builder, and identity fails closed.
    return environ.get(TASK_ID_VARIABLE)


def is_agent(environ: Mapping[str, str]) -> bool:
    """Whether the session environ describes is an agent's: LAZY_TASK_ID set at all, an empty
    one included. Every way in decides it here (engine/identity.py's Identity.is_agent says
    the same of the task id this reads)."""
    return task_id_from(environ) is not None


def find_root(start: Path) -> Path:
    """The nearest ancestor of start (itself included) holding lazy.toml or .git, else start."""
    for directory in (start, *start.parents):
        if is_project_root(directory):
            return directory
    return start


def is_project_root(directory: Path) -> bool:
    """Whether directory is a project's root: it holds lazy.toml or .git. find_root falls back
    on a folder that is not when none above it is."""
    return (directory / CONFIG_FILE).exists() or (directory / ".git").exists()


def load_settings(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Read lazy.toml at the project root, then apply LAZY_* environment overrides."""
    cwd = (cwd or Path.cwd()).resolve()
    environ = os.environ if environ is None else environ
    root = find_root(cwd)
    table, warnings = _read_config_file(root / CONFIG_FILE)
    defaults: dict[str, object] = dict(Settings._field_defaults)
    defaults["data_dir"] = None  # it has none: where it is depends on the root and cwd
    values = {
        name: _value(setting, table, environ, defaults[name])
        for name, setting in _FILE_SETTINGS.items()
    }
    data_dir = _data_dir(cwd, root, environ, values.pop("data_dir"))
    if values["tls_ca_file"] is not None:
        values["tls_ca_file"] = root / values["tls_ca_file"]
    return Settings(
        root=root,
        data_dir=data_dir,
        actor=environ.get("LAZY_ACTOR") or None,
        task_id=task_id_from(environ),
        token=environ.get("LAZY_TOKEN") or None,
        offline=environ.get("LAZY_OFFLINE", "") not in ("", "0"),
        warnings=tuple(warnings),
        **values,
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
        fallback = Settings(
            root=root,
            data_dir=_data_dir(cwd, root, environ, None),
            actor=environ.get("LAZY_ACTOR") or None,
            task_id=task_id_from(environ),
        )
        return fallback, error


def _data_dir(cwd: Path, root: Path, environ: Mapping[str, str], configured: str | None) -> Path:
    """LAZY_DATA (from cwd), else [storage] data_dir (from the root), else the root's .lazy."""
    if environ.get("LAZY_DATA"):
        return cwd / environ["LAZY_DATA"]
    return root / (configured or ".lazy")


def _value(
    setting: _Setting, table: dict[str, Any], environ: Mapping[str, str], default: object
) -> Any:
    """A setting's checked value: its variable's if set, else lazy.toml's, else default."""
    value: object = environ.get(setting.variable, "") if setting.variable else ""
    if not value:
        section, key = setting.key.split(".")
        value = _section(table, section).get(key, default)
    return None if value is None else setting.check(value, setting.label)


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
    known = _known_keys()
    for section, value in table.items():
        if section not in known or not isinstance(value, dict):
            warnings.append(f"{path}: ignoring unknown section [{section}]")
            continue
        warnings.extend(
            f"{path}: ignoring unknown key {section}.{key}"
            for key in value
            if key not in known[section]
        )
    return table, warnings


def _known_keys() -> dict[str, set[str]]:
    """The keys lazy.toml may hold, by section."""
    known: dict[str, set[str]] = {}
    for setting in _FILE_SETTINGS.values():
        section, key = setting.key.split(".")
        known.setdefault(section, set()).add(key)
    return known


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


class _Setting(NamedTuple):
    """Where one Settings field is read from, and the check its value must pass."""

    key: str
    """Its lazy.toml key, as section.name."""
    check: Callable[[object, str], Any]
    variable: str | None = None
    """The LAZY_* variable that overrides lazy.toml, if any; set but empty counts as unset."""

    @property
    def label(self) -> str:
        """The setting as an error names it."""
        # A variable set is never empty, so it passes a string check: only a bad number can
        # have come from the variable, and only then is the variable named.
        if self.variable is None or self.check is _string:
            return self.key
        return f"{self.key} ({self.variable})"


_FILE_SETTINGS: dict[str, _Setting] = {
    "data_dir": _Setting("storage.data_dir", _string),
    "backend": _Setting("storage.backend", _string, "LAZY_STORAGE"),
    "pg_dsn": _Setting("storage.pg_dsn", _string, "LAZY_PG_DSN"),
    "project": _Setting("storage.project", _string, "LAZY_PROJECT"),
    "connect_timeout_seconds": _Setting(
        "storage.connect_timeout_seconds", _positive_seconds, "LAZY_CONNECT_TIMEOUT"
    ),
    "warn_bytes": _Setting("memory.warn_bytes", _positive_int),
    "max_body_bytes": _Setting("memory.max_body_bytes", _positive_int),
    "remote": _Setting("remote.address", _string, "LAZY_REMOTE"),
    "tls_ca_file": _Setting("remote.ca_file", _string, "LAZY_TLS_CA"),
    "request_timeout_seconds": _Setting("remote.request_timeout_seconds", _positive_seconds),
    "compact_model": _Setting("compact.model", _string),
    "compact_command": _Setting("compact.command", _string),
    "compact_timeout_seconds": _Setting("compact.timeout_seconds", _positive_seconds),
    "poll_seconds": _Setting("engine.poll_seconds", _positive_seconds, "LAZY_POLL_SECONDS"),
    "handshake_timeout_seconds": _Setting("engine.handshake_timeout_seconds", _positive_seconds),
    "idle_timeout_seconds": _Setting("engine.idle_timeout_seconds", _positive_seconds),
    "max_connections": _Setting("engine.max_connections", _positive_int),
    "max_unauthenticated_connections": _Setting(
        "engine.max_unauthenticated_connections", _positive_int
    ),
    "hook_limit_chars": _Setting("claude_code.hook_limit_chars", _positive_int),
    "tool_result_limit_chars": _Setting("claude_code.tool_result_limit_chars", _positive_int),
    "hook_timeout_seconds": _Setting("claude_code.hook_timeout_seconds", _positive_seconds),
}
"""Every setting lazy.toml holds, by its Settings field (whose default it takes): the one
place a key, its variable and its check are written."""
