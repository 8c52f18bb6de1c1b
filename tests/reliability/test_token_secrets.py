"""The store's boundaries (issue #11, part 4; tests/reliability/boundaries.py): tokens are kept
as digests only, a secret nowhere, in a file of mode 0600, and every one is compared with
hmac.compare_digest, never with an ordinary operator.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters import tokens as tokens_module
from lazy_memory.adapters.tokens import TokenStore, digest
from lazy_memory.engine.errors import PermissionDenied
from lazy_memory.rpc.jsonrpc import daemon as daemon_module
from tests.reliability.boundary_scene import Scene
from tests.reliability.live_engine import LAZY
from tests.reliability.write_paths import connect
from tests.support.daemon import running_daemon


def test_no_secret_is_kept_anywhere_and_the_token_file_stays_private(
    scene: Scene,
) -> None:
    created = [
        subprocess.run(
            [*LAZY, "engine", "token", "add", "--role", role, "--json", *extra],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            umask=0,
        )
        for role, extra in (("builder", []), ("agent", ["--task", "t1"]), ("human", []))
    ]
    tokens = [json.loads(done.stdout) for done in created]
    revoked = subprocess.run(
        [*LAZY, "engine", "token", "revoke", tokens[2]["id"]],
        capture_output=True,
        timeout=60,
        check=True,
        umask=0,
    )
    assert revoked.returncode == 0
    token_file = scene.data_dir / "tokens.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:

        async def session() -> None:
            for token in tokens:
                client = await connect(daemon)
                initialized = await client.initialize({"token": token["secret"]})
                if "result" in initialized:
                    await client.request(
                        "lazy/memory/save",
                        {"name": "by-token", "type": "user", "description": "d", "body": "b"},
                    )
                client.writer.close()

        asyncio.run(session())
        assert daemon.stop() == 0
    kept = [path for path in scene.data_dir.rglob("*") if path.is_file()]
    assert kept
    for token in tokens:
        secret = token["secret"].encode()
        for path in kept:
            content = path.read_bytes()
            assert secret not in content, path
            assert secret.removeprefix(b"lzm_") not in content, path
        assert token["secret"] not in "".join(daemon.log)
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_the_daemon_checks_every_token_with_compare_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    secrets = [store.add("builder", f"b{number}")[1] for number in range(3)]
    compared: list[tuple[str, str]] = []
    real = tokens_module.hmac.compare_digest

    def spy(stored: Any, presented: Any) -> bool:
        compared.append((stored, presented))
        return real(stored, presented)

    monkeypatch.setattr(tokens_module.hmac, "compare_digest", spy)
    authenticate = daemon_module.token_authenticator(store, "connection 1")

    grant = authenticate({"token": secrets[1]})
    assert grant.identity.actor.detail == "b1"
    assert len(compared) == 3
    with pytest.raises(PermissionDenied):
        authenticate({"token": secrets[1][:-1] + "x"})
    assert len(compared) == 6, "every stored digest is compared, match or not"
    assert {presented for _, presented in compared[:3]} == {digest(secrets[1])}


def test_no_secret_or_digest_is_compared_with_an_ordinary_operator() -> None:
    for module in (tokens_module, daemon_module):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops
            ):
                text = ast.unparse(node).lower()
                problem = f"{module.__name__}: `{text}` compares a secret in variable time"
                assert "digest" not in text, problem
                assert "secret" not in text, problem
