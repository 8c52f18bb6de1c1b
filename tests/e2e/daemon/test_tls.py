"""`lazy engine --listen` over TLS: a verified client is served and a plain one is not, and
the CLI uses a TLS daemon as its remote store, refusing one whose certificate it cannot verify.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.daemon.raw_daemon import StartDaemon, add_token, save_params, self_signed_certificate


async def test_tls_over_tcp_serves_a_verified_client(
    start_daemon: StartDaemon, tmp_path: Path
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    token = add_token("builder", "--name", "over-tls")
    daemon = await start_daemon(
        "--listen", "tcp:127.0.0.1:0", "--tls-cert", str(cert), "--tls-key", str(key)
    )
    context = ssl.create_default_context(cafile=str(cert))

    client = await daemon.client(token, ssl=context, server_hostname="localhost")
    saved = await client.result("lazy/memory/save", save_params("secret-plans", "over TLS"))
    recalled = await client.result("lazy/memory/recall", {"name": "secret-plans"})

    assert saved["updated_by"] == {"kind": "builder", "detail": "over-tls"}
    assert recalled["record"]["body"] == "over TLS"
    plain = await daemon.connect()
    with pytest.raises(ConnectionError):
        await plain.initialize({"token": token.secret})
    assert (await client.result("lazy/memory/recall"))["records"]
    assert await client.close() is None
    assert await daemon.stop() == 0


async def test_the_cli_uses_a_tls_daemon_as_its_remote_store(
    start_daemon: StartDaemon, tmp_path: Path, isolated_environment: Path
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    token = add_token("engine", "--name", "laptop")
    daemon = await start_daemon(
        "--listen", "tls:localhost:0", "--tls-cert", str(cert), "--tls-key", str(key)
    )
    address = daemon.address
    assert address.startswith("tls:localhost:")
    remote = {
        **os.environ,
        "LAZY_STORAGE": "remote",
        "LAZY_REMOTE": address,
        "LAZY_TOKEN": token.secret,
        "LAZY_TLS_CA": str(cert),
        "LAZY_DATA": str(tmp_path / "client-side"),
    }

    def client(*arguments: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
            capture_output=True,
            text=True,
            timeout=60,
            env={**remote, **extra},
        )

    saved = client("memory", "save", "over-tls", "-t", "project", "-d", "via TLS", "--body", "b")
    shown = client("memory", "show", "over-tls", "--json")
    untrusted = client("memory", "list", LAZY_TLS_CA="")

    assert saved.returncode == 0, saved.stderr
    assert json.loads(shown.stdout)["updated_by"]["kind"] == "human"
    assert untrusted.returncode == 7
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr
    assert not (tmp_path / "client-side").exists(), "a remote client keeps no local store"
    assert await daemon.stop() == 0
