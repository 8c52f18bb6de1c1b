"""The daemon's tokens: who may connect and as whom, kept as SHA-256 digests in one file.

`<data>/tokens.json` is private (mode 0600) and replaced atomically on every change. It never
holds a secret: a secret is shown once, when its token is created, and a presented secret is
checked by comparing its digest with every stored digest in constant time. The daemon reads
the file at each connection, so a revoked token stops working without a restart.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lazy_memory.adapters.clock import SystemClock
from lazy_memory.adapters.data_dir import create_data_dir
from lazy_memory.adapters.durable import exclusive_lock, replace_file
from lazy_memory.engine.errors import InvalidConfig, NotFound, StorageUnavailable
from lazy_memory.engine.ports import Clock

TOKENS_FILE = "tokens.json"
"""The token file's name in the data directory."""

SECRET_PREFIX = "lzm_"
"""Every secret starts with this, so a leaked one is recognisable (and scannable) as ours."""

ID_PREFIX = "tok_"
NAME_MAX_LENGTH = 100
_PRIVATE = 0o600
_PRIVATE_DIRECTORY = 0o700
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


class TokenRole(StrEnum):
    """What a token's holder is, which fixes what its connections may do."""

    HUMAN = "human"
    BUILDER = "builder"
    AGENT = "agent"
    ENGINE = "engine"


class TokenInfo(BaseModel):
    """A token as it may be shown: everything but its secret's digest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    role: TokenRole
    name: str
    task: str | None = None
    created_at: datetime


class _StoredToken(TokenInfo):
    """A token as the file holds it: with the SHA-256 hex digest of its secret."""

    digest: str

    def public(self) -> TokenInfo:
        return TokenInfo.model_validate(self.model_dump(exclude={"digest"}))


class _TokenFile(BaseModel):
    """The whole of tokens.json."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    tokens: list[_StoredToken] = []


def digest(secret: str) -> str:
    """The SHA-256 hex digest of a secret, the only form in which it is stored."""
    # A secret that arrived as JSON may hold lone surrogates: it must hash, not crash.
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore:
    """The tokens a daemon accepts, in one private JSON file."""

    def __init__(self, path: Path, clock: Clock | None = None) -> None:
        self.path = path
        self._clock = clock or SystemClock()
        self._lock = path.with_name(f".{path.name}.lock")

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> TokenStore:
        """The store at `<data_dir>/tokens.json`."""
        return cls(data_dir / TOKENS_FILE)

    def add(
        self, role: TokenRole | str, name: str | None = None, task: str | None = None
    ) -> tuple[TokenInfo, str]:
        """Create a token: its info and its secret, which is not stored and never shown again."""
        role = _role(role)
        if role is TokenRole.AGENT and task is None:
            raise InvalidConfig("an agent token needs a task id: an agent works on one task")
        if role is not TokenRole.AGENT and task is not None:
            raise InvalidConfig(f"a {role} token carries no task id: only agent tokens do")
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        with self._locked():
            tokens = self._load()
            token_id = _new_id({token.id for token in tokens})
            token = _StoredToken(
                id=token_id,
                role=role,
                name=token_id if name is None else _check_text("name", name),
                task=None if task is None else _check_text("task id", task),
                created_at=self._clock.now(),
                digest=digest(secret),
            )
            self._write([*tokens, token])
        return token.public(), secret

    def revoke(self, token_id: str) -> TokenInfo:
        """Delete a token so no new connection is accepted with it; NotFound if unknown."""
        with self._locked():
            tokens = self._load()
            revoked = [token for token in tokens if token.id == token_id]
            if not revoked:
                raise NotFound(f"no token with id {token_id!r} (`lazy engine token list`)")
            self._write([token for token in tokens if token.id != token_id])
        return revoked[0].public()

    def verify(self, secret: str) -> TokenInfo | None:
        """The token whose secret this is, or None; every digest is compared in constant time."""
        presented = digest(secret)
        found: _StoredToken | None = None
        for token in self._load():
            # No early exit either: the time taken must not tell which token nearly matched.
            if hmac.compare_digest(token.digest, presented):
                found = token
        return None if found is None else found.public()

    def require_private(self) -> None:
        """Refuse (InvalidConfig) a data directory or token file that another user can write.

        Whoever can write either can plant a token or change the store behind the daemon, so
        its tokens would guard nothing: the daemon checks this before it listens. A missing
        data directory is created private.
        """
        directory = self.path.parent
        try:
            create_data_dir(directory, _PRIVATE_DIRECTORY)
            _require_private(directory, "the data directory", "chmod 700")
            if self.path.exists():
                _require_private(self.path, "the token file", "chmod 600")
        except OSError as error:
            raise StorageUnavailable(
                f"cannot check the permissions of {error.filename or directory}: {error.strerror}"
            ) from None

    def _load(self) -> list[_StoredToken]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as error:
            raise StorageUnavailable(
                f"cannot read the token file {self.path}: {error.strerror}"
            ) from None
        try:
            return _TokenFile.model_validate_json(raw).tokens
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise StorageUnavailable(
                f"the token file {self.path} is corrupt ({where + ': ' if where else ''}"
                f"{first['msg']}): fix it, or remove it and create the tokens again"
            ) from None

    def _write(self, tokens: list[_StoredToken]) -> None:
        """Replace the file atomically with a private one (0600 whatever the umask)."""
        data = _TokenFile(tokens=tokens).model_dump_json(indent=2).encode("utf-8") + b"\n"
        try:
            replace_file(self.path, data, _PRIVATE)
        except OSError as error:
            raise StorageUnavailable(
                f"cannot write the token file {self.path}: {error.strerror}"
            ) from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the store's lock, so two token commands at once cannot lose a change."""
        with contextlib.ExitStack() as stack:
            try:
                create_data_dir(self.path.parent, _PRIVATE_DIRECTORY)
                stack.enter_context(exclusive_lock(self._lock, _PRIVATE))
            except OSError as error:
                raise StorageUnavailable(
                    f"cannot lock the token file {self.path}: {error.strerror}"
                ) from None
            yield

    # Defined last: inside the class body its name shadows the builtin in later annotations.
    def list(self) -> list[TokenInfo]:
        """Every token, oldest first, without digests."""
        return [token.public() for token in self._load()]


def _require_private(path: Path, what: str, fix: str) -> None:
    """InvalidConfig, in one line with the path, its mode and the fix, unless path is private."""
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if mode & _WRITABLE_BY_OTHERS:
        raise InvalidConfig(
            f"{what} {path} is writable by its group or others (mode {mode:04o}), so they "
            f"could plant a token or change the store: run `{fix} {path}`"
        )
    # Root owning it is fine (a root-made directory given to the daemon's user); anyone else
    # could chmod it at will.
    if info.st_uid not in (os.getuid(), 0):
        raise InvalidConfig(
            f"{what} {path} (mode {mode:04o}) belongs to uid {info.st_uid}, not to this user "
            f"(uid {os.getuid()}), who could make it writable at will: run the daemon as its "
            f"owner, or `chown {os.getuid()} {path}` and `{fix} {path}`"
        )


def _role(value: TokenRole | str) -> TokenRole:
    try:
        return TokenRole(value)
    except ValueError:
        known = ", ".join(member.value for member in TokenRole)
        raise InvalidConfig(f"unknown token role {value!r}: use one of {known}") from None


def _check_text(field: str, value: str) -> str:
    """Refuse what cannot stand as an actor's name in history and logs: one printable line."""
    if not value.strip() or len(value) > NAME_MAX_LENGTH or not value.isprintable():
        raise InvalidConfig(
            f"invalid token {field} {value!r}: use 1-{NAME_MAX_LENGTH} printable characters "
            "on one line"
        )
    return value


def _new_id(taken: set[str]) -> str:
    while True:
        token_id = ID_PREFIX + secrets.token_hex(4)
        if token_id not in taken:
            return token_id
