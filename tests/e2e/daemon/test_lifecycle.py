"""Starting and stopping `lazy engine --listen`: SIGTERM and SIGINT stop it cleanly, keeping
every acknowledged save and removing its socket; a stale socket is replaced and a live one
refused; an unusable listen address or TLS file is one line and status 4.
"""

from __future__ import annotations

import asyncio
import json
import signal
import stat
from pathlib import Path

import pytest

from tests.e2e.daemon.raw_daemon import StartDaemon, add_token, lazy, save_params
from tests.support.jsonrpc import TIMEOUT


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
