"""The daemon's token store: digests not secrets, a private file, roles and their rules."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from lazy_memory.adapters import tokens as tokens_module
from lazy_memory.adapters.tokens import SECRET_PREFIX, TokenRole, TokenStore
from lazy_memory.engine.errors import InvalidConfig, NotFound, StorageUnavailable
from tests.support.clocks import NOON, FixedClock


@pytest.fixture
def store(tmp_path: Path) -> TokenStore:
    return TokenStore(tmp_path / "data" / "tokens.json", FixedClock(NOON))


def test_a_new_token_gets_a_recognisable_secret_shown_only_to_its_creator(
    store: TokenStore,
) -> None:
    token, secret = store.add(TokenRole.BUILDER, "ci-runner")

    assert secret.startswith(SECRET_PREFIX)
    assert len(secret) > len(SECRET_PREFIX) + 40
    assert token.id.startswith("tok_")
    assert (token.role, token.name, token.task, token.created_at) == (
        TokenRole.BUILDER,
        "ci-runner",
        None,
        NOON,
    )
    assert store.list() == [token]
    assert "digest" not in token.model_dump()


def test_the_file_holds_the_sha256_digest_and_never_the_secret(store: TokenStore) -> None:
    _, secret = store.add("human", "alice")

    text = store.path.read_text(encoding="utf-8")

    assert secret not in text
    assert secret.removeprefix(SECRET_PREFIX) not in text
    stored = json.loads(text)["tokens"][0]
    assert stored["digest"] == hashlib.sha256(secret.encode()).hexdigest()


def test_the_file_is_private_whatever_the_umask(store: TokenStore) -> None:
    previous = os.umask(0)
    try:
        store.add("builder")
        store.add("builder")
    finally:
        os.umask(previous)

    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    leftovers = {path.name for path in store.path.parent.iterdir()} - {
        "tokens.json",
        ".tokens.json.lock",
        ".gitignore",  # the data directory's, written when the first token created it
    }
    assert leftovers == set()


def test_a_token_without_a_name_is_named_by_its_id(store: TokenStore) -> None:
    token, _ = store.add("engine")

    assert token.name == token.id


def test_verify_finds_the_token_of_a_secret_and_nothing_for_any_other(
    store: TokenStore,
) -> None:
    first, first_secret = store.add("builder", "one")
    second, second_secret = store.add("human", "two")

    assert store.verify(first_secret) == first
    assert store.verify(second_secret) == second
    for wrong in ("", first_secret + "x", first_secret[:-1], "\ud800", second.id):
        assert store.verify(wrong) is None


def test_verify_compares_every_digest_in_constant_time(
    store: TokenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, secret = store.add("builder", "one")
    store.add("builder", "two")
    store.add("builder", "three")
    compared: list[tuple[str, str]] = []
    real: Callable[[str, str], bool] = hmac.compare_digest

    def spy(stored: str, presented: str) -> bool:
        compared.append((stored, presented))
        return real(stored, presented)

    monkeypatch.setattr(tokens_module.hmac, "compare_digest", spy)

    assert store.verify(secret) is not None
    # Every stored digest is compared, the matching one first: no early exit.
    assert len(compared) == 3
    assert {presented for _, presented in compared} == {hashlib.sha256(secret.encode()).hexdigest()}


def test_an_agent_token_needs_a_task_and_no_other_role_takes_one(store: TokenStore) -> None:
    with pytest.raises(InvalidConfig, match="task id"):
        store.add("agent", "helper")
    for role in ("human", "builder", "engine"):
        with pytest.raises(InvalidConfig, match="only agent tokens"):
            store.add(role, "x", task="t1")

    agent, _ = store.add("agent", "helper", task="t1")

    assert agent.task == "t1"
    assert [token.id for token in store.list()] == [agent.id]


@pytest.mark.parametrize(
    ("role", "name"),
    [("admin", None), ("builder", ""), ("builder", "two\nlines"), ("builder", "x" * 101)],
)
def test_unknown_roles_and_unusable_names_are_refused(
    store: TokenStore, role: str, name: str | None
) -> None:
    with pytest.raises(InvalidConfig):
        store.add(role, name)

    assert store.list() == []


def test_a_revoked_token_no_longer_verifies(store: TokenStore) -> None:
    kept, kept_secret = store.add("builder", "kept")
    gone, gone_secret = store.add("builder", "gone")

    assert store.revoke(gone.id) == gone

    assert store.verify(gone_secret) is None
    assert store.verify(kept_secret) == kept
    assert store.list() == [kept]


def test_revoking_an_unknown_id_is_not_found(store: TokenStore) -> None:
    store.add("builder")

    with pytest.raises(NotFound, match="tok_nothere"):
        store.revoke("tok_nothere")


def test_a_missing_file_is_an_empty_store(store: TokenStore) -> None:
    assert store.list() == []
    assert store.verify(SECRET_PREFIX + "anything") is None
    assert not store.path.exists()


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        b'{"version": 2, "tokens": []}',
        b'{"version": 1, "tokens": [{"id": "tok_1"}]}',
        b"\xff\xfe",
    ],
)
def test_a_corrupt_file_is_storage_unavailable_naming_it(store: TokenStore, content: bytes) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)

    for operation in (store.list, lambda: store.verify("x"), lambda: store.add("builder")):
        with pytest.raises(StorageUnavailable, match=r"token file .* is corrupt"):
            operation()
    assert store.path.read_bytes() == content
