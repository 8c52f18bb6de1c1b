"""The daemon's log of connections without a token (rpc/jsonrpc/quiet_log.py): a flood of
events costs it LINES_PER_SECOND lines and one line of counts, not a line each."""

from __future__ import annotations

import logging

import pytest

from lazy_memory.rpc.jsonrpc.quiet_log import LINES_PER_SECOND, QuietLog


async def test_past_a_few_lines_events_are_counted_and_summed_up_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("test_quiet_log")
    quiet = QuietLog(logger)
    with caplog.at_level(logging.INFO, logger="test_quiet_log"):
        for n in range(1000):
            event = "accepted" if n % 2 else "dropped to make room"
            if quiet.allows(event):
                logger.info("connection %d %s", n, event)
        quiet.sum_up()
        quiet.sum_up()  # nothing more counted: nothing more said

    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == LINES_PER_SECOND + 1
    assert lines[-1] == (
        f"{1000 - LINES_PER_SECOND} more events of connections without a token, not logged "
        f"one by one: {500 - LINES_PER_SECOND // 2} dropped to make room, "
        f"{500 - LINES_PER_SECOND // 2} accepted"
    )
