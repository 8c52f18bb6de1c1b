"""Index lines: one line per live record, as the launch context and `lazy memory list` show it."""

from __future__ import annotations

from lazy_memory.engine.records import Record


def collapse_whitespace(text: str) -> str:
    """Text with every run of whitespace (line breaks included) turned into one space."""
    return " ".join(text.split())


def index_line(record: Record) -> str:
    """`- name (type): description`, the description's whitespace collapsed, never truncated."""
    return f"- {record.name} ({record.type}): {collapse_whitespace(record.description)}"
