"""The real `lazy engine --listen` in a subprocess, for tests that talk to it over sockets.

A Daemon (started by the `start_daemon` fixture of conftest.py) opens raw clients
(tests/support/jsonrpc.py) on fresh connections. Also tokens made with the real CLI, the params
of a valid save, and a throwaway TLS certificate.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.components import missing
from tests.support.jsonrpc import TIMEOUT, RawClient

READY = "lazy-memory daemon listening on "


def lazy(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run `lazy ARGS...` to completion (the data directory comes from LAZY_DATA)."""
    return subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass(frozen=True)
class Token:
    """A token as `lazy engine token add --json` printed it."""

    id: str
    secret: str


def add_token(role: str, *options: str) -> Token:
    """Create a token with the CLI."""
    created = lazy("engine", "token", "add", "--role", role, *options, "--json")
    assert created.returncode == 0, created.stderr
    printed = json.loads(created.stdout)
    return Token(printed["id"], printed["secret"])


def save_params(name: str, body: str = "b") -> dict[str, str]:
    """Params of a valid save."""
    return {"name": name, "type": "project", "description": f"about {name}", "body": body}


@dataclass
class Daemon:
    """A running `lazy engine --listen` and everything it has logged so far."""

    process: asyncio.subprocess.Process
    address: str = ""
    log: list[str] = field(default_factory=list)
    logging: asyncio.Condition = field(default_factory=asyncio.Condition)
    clients: list[RawClient] = field(default_factory=list)

    async def connect(self, **options: Any) -> RawClient:
        """A raw client on a fresh connection, with open_connection options (ssl=...)."""
        scheme, _, rest = self.address.partition(":")
        if scheme == "unix":
            opening = asyncio.open_unix_connection(rest, **options)
        else:
            host, _, port = rest.rpartition(":")
            opening = asyncio.open_connection(host, int(port), **options)
        reader, writer = await asyncio.wait_for(opening, TIMEOUT)
        client = RawClient(reader, writer)
        self.clients.append(client)
        return client

    async def client(self, token: Token, **options: Any) -> RawClient:
        """A connection initialized with token."""
        client = await self.connect(**options)
        initialized = await client.initialize({"token": token.secret})
        assert "result" in initialized, initialized
        return client

    async def stop(self, signum: int = signal.SIGTERM) -> int:
        """Signal the daemon and return its exit status."""
        self.process.send_signal(signum)
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)

    def logged(self) -> str:
        """The whole stderr so far."""
        return "\n".join(self.log)

    async def wait_for_log(self, text: str) -> None:
        """Wait until the daemon has logged text."""
        async with self.logging:
            await asyncio.wait_for(self.logging.wait_for(lambda: text in self.logged()), TIMEOUT)


StartDaemon = Callable[..., Awaitable[Daemon]]


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate and key for localhost, by `cryptography` or `openssl`."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            missing("openssl", "neither the cryptography package nor openssl is available")
        subprocess.run(
            [
                openssl,
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                str(key),
                "-out",
                str(cert),
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return cert, key
    private_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private_key, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key
