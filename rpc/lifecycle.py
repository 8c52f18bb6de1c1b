"""How a serving process (`lazy engine`, `lazy mcp`) starts and ends, as far as signals go.

Cheap to import: it is imported before pygls, pydantic or the MCP SDK are.
"""

from __future__ import annotations

import gc
import signal
from types import FrameType

DRAIN_SECONDS = 0.5
"""How long a stop (SIGTERM) waits for the requests already read to be answered: a process
must be gone within about a second, or its container runtime kills it."""


def exit_on_sigterm_until_serving() -> None:
    """Until the server installs its own handler, SIGTERM exits 0 at once.

    Nothing has been read yet, so nothing is left to answer or to write. Without this a
    container's main process (PID 1) would ignore a SIGTERM that arrives while it starts,
    and be killed at the stop timeout (exit 137).
    """
    signal.signal(signal.SIGTERM, _exit_now)


def freeze_heap_for_exit() -> None:
    """Spare the interpreter's exit its garbage collection of every object still alive.

    With pygls, pydantic or the MCP SDK loaded it takes 0.3 to 1 s here, more than a stop
    on SIGTERM may take in all. Call it once the store is closed: nothing left then is a
    cycle whose finalizer matters.
    """
    gc.freeze()


def _exit_now(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
