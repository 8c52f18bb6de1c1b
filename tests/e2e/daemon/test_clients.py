"""`lazy engine --listen` with many raw clients at once: two write concurrently into one store,
each as its token; clients that send garbage, hang up mid-message, reset or never read what
they are sent are dropped alone, and never disturb a working one.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from pathlib import Path

import pytest

from tests.e2e.daemon.raw_daemon import StartDaemon, add_token, save_params


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
