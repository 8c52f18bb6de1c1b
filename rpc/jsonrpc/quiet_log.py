"""The daemon's log of connections without a token, which a flood must not flood.

Each such event (accepted, dropped to make room, timed out, closed) gets its own line while
there are few: up to LINES_PER_SECOND a second. Past that, events are counted instead, and
the counts go out as one line a second. A thousand hostile sockets cost the log one line a
second, not thousands, and the daemon the time to write them (at a few thousand a second,
writing the lines took a tenth of its time). What a connection with a valid token does is
always logged in full, as are refused tokens.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

LINES_PER_SECOND = 20
WINDOW_SECONDS = 1.0


class QuietLog:
    """Says whether an event about a connection without a token gets its own line."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._window_started = float("-inf")
        self._lines = 0
        self._counted: Counter[str] = Counter()
        self._summing_up: asyncio.TimerHandle | None = None

    def allows(self, event: str) -> bool:
        """True if event gets its own line now; else it is counted and summed up later."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now - self._window_started >= WINDOW_SECONDS:
            self._window_started, self._lines = now, 0
        if self._lines < LINES_PER_SECOND:
            self._lines += 1
            return True
        self._counted[event] += 1
        if self._summing_up is None:
            self._summing_up = loop.call_later(WINDOW_SECONDS, self.sum_up)
        return False

    def sum_up(self) -> None:
        """Log what was counted, in one line, and start counting afresh."""
        if self._summing_up is not None:
            self._summing_up.cancel()
        self._summing_up = None
        counted, self._counted = self._counted, Counter()
        if counted:
            self._logger.warning(
                "%d more events of connections without a token, not logged one by one: %s",
                counted.total(),
                ", ".join(f"{count} {event}" for event, count in counted.most_common()),
            )
