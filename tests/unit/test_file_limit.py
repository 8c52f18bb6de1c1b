"""The daemon's open-file limit (rpc/jsonrpc/front_door.py `raise_file_limit`): raised to what
its caps can take where the system allows, and a warning where it does not. Each case runs in a
process of its own, whose limits it may lower for good."""

from __future__ import annotations

import resource
import subprocess
import sys

from lazy_memory.rpc.jsonrpc.connection_limits import ConnectionLimits
from lazy_memory.rpc.jsonrpc.front_door import sockets_needed

CASE = """
import logging, resource, sys
from lazy_memory.rpc.jsonrpc.connection_limits import ConnectionLimits
from lazy_memory.rpc.jsonrpc.front_door import raise_file_limit
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
soft, hard = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
raise_file_limit(ConnectionLimits())
print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
"""


def run_case(soft: int, hard: int) -> list[str]:
    """What a process with those limits printed: any warning, then its soft limit."""
    done = subprocess.run(
        [sys.executable, "-c", CASE, str(soft), str(hard)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_the_default_caps_need_3392_descriptors() -> None:
    assert sockets_needed(ConnectionLimits()) == 256 + 3 * 1024 + 64 == 3392


def test_a_low_soft_limit_is_raised_to_what_the_caps_need() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]  # what any process may keep
    reachable = hard == resource.RLIM_INFINITY or hard >= 3392

    assert run_case(256, hard)[-1] == ("3392" if reachable else str(hard))


def test_a_hard_limit_too_low_is_reached_and_said() -> None:
    printed = run_case(256, 1024)

    assert printed == [
        "the open-file limit (1024) is below the 3392 that max_connections and "
        "max_unauthenticated_connections may take: raise `ulimit -n` or lower them",
        "1024",
    ]
