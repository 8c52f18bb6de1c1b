"""When the PostgreSQL backend tries an operation again, how long it waits, and what it says.

Transient failures are retried with exponential backoff, a bounded number of times. A server
that cannot be reached (down, restarting, or accepting connections without ever answering)
gets the connect timeout, its retries included, and no more: past it the operation fails with
StorageUnavailable, so no launch waits on a dead store longer than `[storage]
connect_timeout_seconds`.
"""

from __future__ import annotations

import random
import time

from lazy_memory.engine.errors import StorageUnavailable

ATTEMPTS = 6
"""Tries of one operation before a transient failure is reported (about 3 s of backoff)."""
FIRST_BACKOFF_SECONDS = 0.1


class Retries:
    """The retry budget of one operation: a number of tries, and a time to reach the server."""

    def __init__(self, connect_timeout: float) -> None:
        self._connect_timeout = connect_timeout
        self._unreachable_since: float | None = None

    def pause(self, attempt: int, *, unreachable: bool) -> float | None:
        """The pause before the try after attempt, or None when the failure is final."""
        if attempt >= ATTEMPTS:
            return None
        pause = backoff(attempt)
        if not unreachable:
            return pause
        # The server gets the connect timeout to come back, counted from the first failure
        # to reach it (not from the start: a slow read cut off late deserves its retries).
        # So a server that is down fails as fast as a mute one.
        now = time.monotonic()
        if self._unreachable_since is None:
            self._unreachable_since = now
        if now - self._unreachable_since + pause > self._connect_timeout:
            return None
        return pause


def backoff(attempt: int) -> float:
    """The pause before retry number attempt: doubling, with jitter so retries spread out."""
    return FIRST_BACKOFF_SECONDS * 2.0 ** (attempt - 1) * random.uniform(0.5, 1.0)


def reason(error: BaseException) -> str:
    """The cause of a driver error in a few words, on one line."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def no_answer(where: str, connect_timeout: float) -> StorageUnavailable:
    """The error of a server that did not complete a connection within the connect timeout."""
    return StorageUnavailable(
        f"cannot reach PostgreSQL at {where}: no answer within {connect_timeout:g} s "
        "(connect_timeout_seconds)"
    )
