"""`lazy engine --listen`: the real daemon in a subprocess, many raw clients over sockets."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.components import missing
from tests.e2e.jsonrpc import TIMEOUT, RawClient

READY = "lazy-memory daemon listening on "
TOKEN_REQUIRED = "a valid token is required: pass initializationOptions.token"


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


@pytest.fixture
def socket_directory() -> Iterator[Path]:
    """A short directory for unix sockets (their paths are limited to about 100 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="lzd-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
async def start_daemon() -> AsyncIterator[StartDaemon]:
    """Start daemons and wait until each listens or exits; any left running are killed."""
    daemons: list[Daemon] = []
    readers: list[asyncio.Task[None]] = []

    async def start(*arguments: str) -> Daemon:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lazy_memory.rpc.cli",
            "engine",
            *arguments,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        daemon = Daemon(process)
        daemons.append(daemon)
        # The address it listens on, or None if it exited without listening.
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        async def read_stderr() -> None:
            # Read to the end, always: a daemon whose stderr pipe fills up would stall.
            assert process.stderr is not None
            async for raw in process.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                daemon.log.append(line)
                async with daemon.logging:
                    daemon.logging.notify_all()
                if line.startswith(READY) and not ready.done():
                    ready.set_result(line.removeprefix(READY))
            if not ready.done():
                ready.set_result(None)

        readers.append(asyncio.ensure_future(read_stderr()))
        address = await asyncio.wait_for(ready, TIMEOUT)
        if address is None:
            await asyncio.wait_for(process.wait(), TIMEOUT)
        else:
            daemon.address = address
        return daemon

    yield start
    for daemon in daemons:
        # Hang up first, and collect how each connection ended: a client reset by a killed
        # daemon would otherwise die with an exception nobody retrieved.
        for client in daemon.clients:
            client.writer.close()
        endings = asyncio.gather(*(c.receiving for c in daemon.clients), return_exceptions=True)
        await asyncio.wait_for(endings, TIMEOUT)
        if daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
    await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), TIMEOUT)


@pytest.fixture(params=["unix", "tcp"])
def address(request: pytest.FixtureRequest, socket_directory: Path) -> str:
    """A unix socket path or a free TCP port on the loopback interface."""
    if request.param == "unix":
        return f"unix:{socket_directory / 'engine.sock'}"
    return "tcp:127.0.0.1:0"


async def test_two_clients_write_concurrently_into_one_store_each_as_its_token(
    start_daemon: StartDaemon, address: str
) -> None:
    alice = add_token("human", "--name", "alice")
    builder = add_token("builder", "--name", "ci-7")
    daemon = await start_daemon("--listen", address)
    first, second = await daemon.client(alice), await daemon.client(builder)

    await asyncio.gather(
        *(first.result("lazy/memory/save", save_params(f"alice-{n}")) for n in range(50)),
        *(second.result("lazy/memory/save", save_params(f"ci-{n}")) for n in range(50)),
    )

    for client in (first, second):
        index = (await client.result("lazy/memory/recall"))["records"]
        assert len(index) == 100
    seen = await second.result("lazy/memory/recall", {"name": "alice-7"})
    assert seen["record"]["updated_by"] == {"kind": "human", "detail": "alice"}
    entries = (await first.result("lazy/memory/history"))["entries"]
    authors = {(e["name"].split("-")[0], e["actor"]["kind"], e["actor"]["detail"]) for e in entries}
    assert len(entries) == 100
    assert authors == {("alice", "human", "alice"), ("ci", "builder", "ci-7")}
    assert await first.close() is None
    assert await second.close() is None
    assert await daemon.stop() == 0
    assert "initialized with token" in daemon.logged()
    assert alice.secret not in daemon.logged()
    assert builder.secret not in daemon.logged()


@pytest.mark.parametrize(
    "options",
    [None, {}, {"token": None}, {"token": "lzm_not-a-real-token"}, {"token": 42}, "a token"],
    ids=["no-options", "no-token", "null", "wrong", "number", "not-an-object"],
)
async def test_a_connection_without_a_valid_token_is_refused_then_closed(
    start_daemon: StartDaemon, socket_directory: Path, options: Any
) -> None:
    add_token("builder")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    client = await daemon.connect()

    early = await client.request("lazy/memory/save", save_params("sneaky"))
    refused = await client.initialize(options)

    assert early["error"]["code"] == -32002
    assert refused["error"] == {
        "code": -32013,
        "message": TOKEN_REQUIRED,
        "data": {"type": "PermissionDenied"},
    }
    assert await client.closed_by_peer()
    assert "refused" in daemon.logged()
    assert lazy("memory", "history", "--json").stdout.strip() == "[]"


async def test_a_revoked_token_is_refused_from_the_next_connection_on(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    token = add_token("builder", "--name", "soon-gone")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    open_before = await daemon.client(token)

    revoked = lazy("engine", "token", "revoke", token.id)
    assert revoked.returncode == 0, revoked.stderr
    assert token.id in revoked.stdout

    refused = await (await daemon.connect()).initialize({"token": token.secret})
    assert refused["error"]["code"] == -32013
    assert refused["error"]["data"] == {"type": "PermissionDenied"}
    # Revoking gates new connections; one already open runs until it closes.
    assert (await open_before.result("lazy/memory/save", save_params("still-open")))["revision"]
    assert lazy("engine", "token", "revoke", token.id).returncode == 3


async def test_an_agent_token_reads_but_every_write_is_refused(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    builder = add_token("builder", "--name", "b1")
    agent_token = add_token("agent", "--task", "t1")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    writer = await daemon.client(builder)
    await writer.result("lazy/memory/save", save_params("deploy"))
    agent = await daemon.client(agent_token)

    saved = await agent.request("lazy/memory/save", save_params("agent-note"))
    removed = await agent.request("lazy/memory/rm", {"name": "deploy"})

    for refused in (saved, removed):
        assert refused["error"]["code"] == -32013
        assert refused["error"]["data"] == {"type": "PermissionDenied"}
        assert "t1" in refused["error"]["message"]
    assert (await agent.result("lazy/memory/recall", {"name": "deploy"}))["record"]
    assert len((await agent.result("lazy/memory/history"))["entries"]) == 1


async def test_misbehaving_clients_never_disturb_a_working_one(
    start_daemon: StartDaemon, address: str
) -> None:
    token = add_token("builder", "--name", "steady")
    daemon = await start_daemon("--listen", address)
    steady = await daemon.client(token)
    saves = 0

    async def steady_save() -> None:
        nonlocal saves
        saves += 1
        await steady.result("lazy/memory/save", save_params(f"steady-{saves}"))

    garbage = await daemon.client(token)
    await garbage.send_raw(b"Content-Length: 9\r\n\r\n{not json")
    assert (await garbage.next_error())["error"]["code"] == -32700
    await steady_save()

    huge = {**save_params("huge"), "body": "x" * (10 * 1024 * 1024)}
    await garbage.send({"jsonrpc": "2.0", "id": 7, "method": "lazy/memory/save", "params": huge})
    assert "limit" in (await garbage.next_error())["error"]["message"]
    assert (await garbage.result("lazy/memory/recall"))["records"] is not None
    await steady_save()

    broken = await daemon.client(token)
    await broken.send_raw(b"X-Nonsense: 1\r\n\r\n")
    assert "closing the connection" in (await broken.next_error())["error"]["message"]
    assert await broken.closed_by_peer()
    await steady_save()

    vanishing = await daemon.client(token)
    await vanishing.send_raw(b'Content-Length: 200\r\n\r\n{"jsonrpc": "2.0", "id": 9, "meth')
    vanishing.writer.close()
    await steady_save()

    # An abort mid-request instead of an orderly close (over TCP a reset: the read fails).
    resetting = await daemon.client(token)
    await resetting.send_raw(b"Content-Length: 500\r\n\r\n{")
    raw_socket = resetting.writer.get_extra_info("socket")
    raw_socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    resetting.writer.transport.abort()
    await steady_save()

    silent = await daemon.connect()
    silent.writer.close()
    await steady_save()

    entries = (await steady.result("lazy/memory/history"))["entries"]
    assert [entry["name"] for entry in entries] == [f"steady-{n}" for n in range(1, saves + 1)]
    assert daemon.process.returncode is None
    assert "result" in await (await daemon.connect()).initialize({"token": token.secret})
    assert await daemon.stop() == 0


async def test_a_client_that_never_reads_its_answers_is_dropped_alone(
    start_daemon: StartDaemon,
    socket_directory: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A project whose lazy.toml takes a 6 MB body: big answers are what this test needs.
    project = tmp_path / "big-bodies"
    (project / ".git").mkdir(parents=True)
    (project / "lazy.toml").write_text(f"[memory]\nmax_body_bytes = {8 * 1024 * 1024}\n")
    monkeypatch.chdir(project)
    token = add_token("builder")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    steady = await daemon.client(token)
    await steady.result("lazy/memory/save", save_params("big", "x" * (6 * 1024 * 1024)))
    greedy = await daemon.connect()
    await greedy.initialize({"token": token.secret})
    greedy.receiving.cancel()  # from here on nothing reads what the daemon sends

    for message_id in range(100, 110):
        recall = {"jsonrpc": "2.0", "id": message_id, "method": "lazy/memory/recall"}
        await greedy.send({**recall, "params": {"name": "big"}})

    await daemon.wait_for_log("does not read its responses")
    assert (await steady.result("lazy/memory/recall", {"name": "big"}))["record"]["revision"] == 1
    assert await daemon.stop() == 0


async def test_sigterm_and_sigint_stop_the_daemon_cleanly_and_remove_its_socket(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    token = add_token("builder")
    path = socket_directory / "engine.sock"
    for signum in (signal.SIGTERM, signal.SIGINT):
        daemon = await start_daemon("--listen", f"unix:{path}")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        client = await daemon.client(token)
        await client.result("lazy/memory/save", save_params(f"before-{signum}"))

        assert await daemon.stop(signum) == 0

        assert not path.exists()
        assert await client.closed_by_peer()
    assert len(json.loads(lazy("memory", "history", "--json").stdout)) == 2


async def test_sigterm_mid_stream_keeps_every_acknowledged_save_and_logs_no_error(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    token = add_token("builder")
    daemon = await start_daemon("--listen", f"unix:{socket_directory / 'engine.sock'}")
    client = await daemon.client(token)
    saves = [
        asyncio.ensure_future(client.request("lazy/memory/save", save_params(f"n-{n}")))
        for n in range(300)
    ]
    await asyncio.wait(saves, return_when=asyncio.FIRST_COMPLETED)

    assert await daemon.stop() == 0

    answers = await asyncio.gather(*saves, return_exceptions=True)
    acknowledged = {a["result"]["name"] for a in answers if isinstance(a, dict) and "result" in a}
    written = {entry["name"] for entry in json.loads(lazy("memory", "history", "--json").stdout)}
    assert acknowledged
    assert acknowledged <= written
    assert "Traceback" not in daemon.logged()
    assert " ERROR " not in daemon.logged()
    assert " WARNING " not in daemon.logged()


async def test_a_stale_socket_is_replaced_and_a_live_one_is_refused(
    start_daemon: StartDaemon, socket_directory: Path
) -> None:
    token = add_token("builder")
    address = f"unix:{socket_directory / 'engine.sock'}"
    first = await start_daemon("--listen", address)

    second = await start_daemon("--listen", address)
    assert second.process.returncode == 4
    assert "another daemon is listening" in second.logged()
    assert "result" in await (await first.connect()).initialize({"token": token.secret})

    first.process.kill()
    await asyncio.wait_for(first.process.wait(), TIMEOUT)
    assert (socket_directory / "engine.sock").exists()
    third = await start_daemon("--listen", address)
    assert third.process.returncode is None
    assert "result" in await (await third.connect()).initialize({"token": token.secret})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--listen", "http://localhost"], "use unix:PATH, tcp:HOST:PORT or tls:HOST:PORT"),
        (["--listen", "tcp:localhost"], "use unix:PATH, tcp:HOST:PORT or tls:HOST:PORT"),
        (["--listen", "tls:127.0.0.1:0"], "tls:127.0.0.1:0 needs --tls-cert and --tls-key"),
        (
            [
                "--listen",
                "tcp:127.0.0.1:0",
                "--tls-cert",
                "/nonexistent/cert.pem",
                "--tls-key",
                "k",
            ],
            "cannot read the TLS certificate /nonexistent/cert.pem",
        ),
    ],
)
def test_an_unusable_listen_address_or_tls_file_is_one_line_and_status_4(
    arguments: list[str], message: str
) -> None:
    failed = lazy("engine", *arguments)

    assert failed.returncode == 4
    assert message in failed.stderr
    assert failed.stderr.count("\n") == 1


def test_tokens_are_private_and_no_listing_shows_a_secret(isolated_environment: Path) -> None:
    human = add_token("human", "--name", "Alice Example")
    agent = add_token("agent", "--name", "helper", "--task", "t1")
    token_file = isolated_environment / "tokens.json"

    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    stored = token_file.read_text(encoding="utf-8")
    for token in (human, agent):
        assert token.secret not in stored
        assert hashlib.sha256(token.secret.encode()).hexdigest() in stored

    listed = lazy("engine", "token", "list", "--json")
    assert listed.returncode == 0
    assert [(t["id"], t["role"], t["name"], t["task"]) for t in json.loads(listed.stdout)] == [
        (human.id, "human", "Alice Example", None),
        (agent.id, "agent", "helper", "t1"),
    ]
    table = lazy("engine", "token", "list")
    for output in (listed.stdout, table.stdout):
        assert "lzm_" not in output
        assert "digest" not in output
    assert human.id in table.stdout

    assert lazy("engine", "token", "revoke", human.id).returncode == 0
    assert [t["id"] for t in json.loads(lazy("engine", "token", "list", "--json").stdout)] == [
        agent.id
    ]
    refused = lazy("engine", "token", "add", "--role", "agent")
    assert (refused.returncode, refused.stderr.count("\n")) == (4, 1)


def test_token_commands_never_import_pygls() -> None:
    finished = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lazy_memory.rpc.cli",
            "engine",
            "token",
            "list",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    imported = {line.split("|")[-1].strip() for line in finished.stderr.splitlines()}
    assert "lazy_memory.rpc.cli.engine" in imported
    assert not {name for name in imported if name.split(".")[0] in ("pygls", "lsprotocol")}


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
