"""Times as the record models write them in JSON, and read back from it without the models.

pydantic writes a datetime as ISO 8601 with `Z` for UTC and microseconds only when there are
some (`2026-01-05T09:00:00Z`, `2026-01-05T09:00:00.500000+02:00`). json_time writes the same,
so the launch log's entries are the same from the models and without them; parse_json_time
reads a time only in that form, the one the models both write and read back to the same time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

_MINUTE = timedelta(minutes=1)


def json_time(at: datetime) -> str:
    """at as the record models write it in JSON: ISO 8601, with Z for UTC."""
    text = at.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def parse_json_time(text: str) -> datetime | None:
    """The time text holds if json_time writes it exactly so, else None.

    So every time read here the models read too, as the same time; any other spelling (an
    offset of +00:00, microseconds of zero, an offset with seconds, which the models refuse)
    is for them to judge.
    """
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    offset = at.utcoffset()
    if offset is not None and offset % _MINUTE:
        return None
    return at if json_time(at) == text else None
