"""Drive the lazy-memory image's stdio engine for .ci/container.sh, through `podman run -i`.

    python -m tests.support.container_probe session --expect NAME -- podman run -i ... IMAGE
    python -m tests.support.container_probe initialize --samples 3 -- podman run -i ... IMAGE
    python -m tests.support.container_probe echo --samples 3 -- \\
        podman run -i --entrypoint cat ... IMAGE
    python -m tests.support.container_probe burst --stop 'podman stop -t 3 NAME' \\
        --history 'podman run ... memory history --json' -- podman run -i --name NAME ... IMAGE

session: initialize, initialized, a recall that must list NAME, shutdown and exit, then exit
status 0. initialize / echo: the median time from starting the command to `initialize`
answered, or to a line echoed back (the floor: a container that answers at once), printed
in ms. burst: saves from many clients at once, the stop command once enough are answered,
then the engine must have exited 0 and the store (as the history command prints it) must hold
every save answered and no other. Exit status 0 when every check holds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shlex
import statistics
import sys
import time
from typing import Any

from tests.support.jsonrpc import RawClient

WRITERS = 32
STOP_AFTER = 40
"""Saves answered before the stop command runs."""
TIMEOUT = 60.0


async def spawn(command: list[str]) -> RawClient:
    """A raw JSON-RPC client on command's stdin and stdout (its stderr is ours)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdin is not None
    client = RawClient(process.stdout, process.stdin)  # type: ignore[arg-type]
    client.process = process
    return client


async def session(command: list[str], expect: str) -> int:
    """The LSP lifecycle around one recall; 0 when all of it went as it should."""
    client = await spawn(command)
    initialized = await client.initialize()
    if "result" not in initialized:
        return fail(f"initialize: {initialized}")
    capabilities = sorted(initialized["result"].get("capabilities", {}))
    print(f"initialize: answered, {len(capabilities)} capabilities")
    records = (await client.result("lazy/memory/recall"))["records"]
    names = [record["name"] for record in records]
    print(f"lazy/memory/recall: {names}")
    if expect not in names:
        return fail(f"recall does not list {expect}")
    status = await client.close()
    print(f"shutdown, exit: exit status {status}")
    return 0 if status == 0 else fail("the engine did not exit 0")


async def time_initialize(command: list[str]) -> float:
    """Seconds from starting command to its answer to `initialize`."""
    start = time.perf_counter()
    client = await spawn(command)
    answered = await client.initialize()
    elapsed = time.perf_counter() - start
    assert "result" in answered, answered
    await client.close()
    return elapsed


async def time_echo(command: list[str]) -> float:
    """Seconds from starting command (a cat) to a line echoed back."""
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(b"ping\n")
    await process.stdin.drain()
    line = await asyncio.wait_for(process.stdout.readline(), TIMEOUT)
    elapsed = time.perf_counter() - start
    assert line == b"ping\n", line
    process.stdin.close()
    await process.wait()
    return elapsed


async def median_ms(measure: Any, command: list[str], samples: int) -> int:
    """The median of samples measurements, printed in ms (the samples go to stderr)."""
    times = [await measure(command) for _ in range(samples)]
    print("samples (ms): " + " ".join(f"{t * 1000:.0f}" for t in times), file=sys.stderr)
    print(f"{statistics.median(times) * 1000:.0f}")
    return 0


async def burst(command: list[str], stop: list[str], history: list[str]) -> int:
    """SIGTERM (by the stop command) during a burst of saves; the checks of the docstring."""
    client = await spawn(command)
    assert client.process is not None
    if "result" not in await client.initialize():
        return fail("initialize")
    acknowledged: set[str] = set()
    refused: dict[str, str] = {}
    names = itertools.count()
    enough = asyncio.Event()

    async def writer() -> None:
        while True:
            name = f"burst-{next(names)}"
            params = {"name": name, "type": "project", "description": "a burst", "body": "b"}
            try:
                response = await client.request("lazy/memory/save", params)
            except (OSError, EOFError):
                return
            if "result" not in response:
                refused[name] = response["error"]["message"]
                return
            acknowledged.add(name)
            if len(acknowledged) >= STOP_AFTER:
                enough.set()

    writers = [asyncio.ensure_future(writer()) for _ in range(WRITERS)]
    await asyncio.wait_for(enough.wait(), TIMEOUT)
    start = time.perf_counter()
    stopped = await asyncio.create_subprocess_exec(*stop, stdout=asyncio.subprocess.DEVNULL)
    stop_status = await stopped.wait()
    stop_seconds = time.perf_counter() - start
    await asyncio.wait_for(asyncio.gather(*writers), TIMEOUT)
    status = await asyncio.wait_for(client.process.wait(), TIMEOUT)
    listed = await asyncio.create_subprocess_exec(*history, stdout=asyncio.subprocess.PIPE)
    out, _ = await listed.communicate()
    written = {entry["name"] for entry in json.loads(out) if entry["name"].startswith("burst-")}
    print(
        f"{' '.join(stop)}: {stop_seconds:.1f} s, exit status {status}; "
        f"{len(acknowledged)} saves acknowledged, {len(refused)} refused as the engine "
        f"stopped, {len(written)} in the store"
    )
    problems = []
    if stop_status:
        problems.append(f"{' '.join(stop)} failed")
    if status != 0:
        problems.append(f"the engine exited {status}, not 0")
    if acknowledged - written:
        problems.append(f"acknowledged saves lost: {sorted(acknowledged - written)}")
    if written - acknowledged:
        problems.append(f"writes never answered: {sorted(written - acknowledged)}")
    if any("stopping" not in message for message in refused.values()):
        problems.append(f"refused for another reason: {refused}")
    return fail("; ".join(problems)) if problems else 0


def fail(message: str) -> int:
    """Say what failed; the exit status of a failure."""
    print(f"FAIL: {message}", file=sys.stderr)
    return 1


def main() -> int:
    """Parse the arguments and run the probe."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.container_probe")
    parser.add_argument("probe", choices=["session", "initialize", "echo", "burst"])
    parser.add_argument("--expect", default="", help="session: a name the recall must list")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--stop", default="", help="burst: the command that stops the engine")
    parser.add_argument("--history", default="", help="burst: prints the store's history")
    words = sys.argv[1:]
    if "--" not in words:
        parser.error("the command to run goes after --")
    cut = words.index("--")
    arguments = parser.parse_args(words[:cut])
    command = words[cut + 1 :]
    if arguments.probe == "session":
        run = session(command, arguments.expect)
    elif arguments.probe == "initialize":
        run = median_ms(time_initialize, command, arguments.samples)
    elif arguments.probe == "echo":
        run = median_ms(time_echo, command, arguments.samples)
    else:
        run = burst(command, shlex.split(arguments.stop), shlex.split(arguments.history))
    return asyncio.run(asyncio.wait_for(run, TIMEOUT * 2))


if __name__ == "__main__":
    sys.exit(main())
