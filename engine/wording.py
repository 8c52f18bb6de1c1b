"""Counts in what people read: a number and its noun agreeing (`1 record`, `2 records`).

Every message, page and log line that counts something says it through counted(), so none
says `1 records` or hedges a plural with an `s` in brackets; tests/unit/test_wording.py holds
the code to it.
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """count and noun, the noun plural unless count is 1 (noun + `s`, or plural when given);
    thousands separated: `1 record`, `0 records`, `1,204 entries`."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def agreeing(count: int, singular: str, plural: str) -> str:
    """The verb (or any word) that agrees with count: `has` for 1, `have` for the rest."""
    return singular if count == 1 else plural
