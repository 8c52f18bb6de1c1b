"""The times tests write at, and the clocks (the engine's Clock port) that give them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
"""The moment a test's first write happens, unless it says otherwise."""

NOON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""A later moment of the same day."""

T0_WITH_MICROSECONDS = T0.replace(microsecond=123456)
"""T0 to the microsecond, for the tests that a store keeps every digit of a time."""


class FixedClock:
    """A clock that reads the moment it holds until the test sets another, backwards included."""

    def __init__(self, moment: datetime = T0) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment


class TickingClock:
    """A clock that reads one second later each time, from start: every write its own time."""

    def __init__(self, start: datetime = T0) -> None:
        self.moment = start

    def now(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment
