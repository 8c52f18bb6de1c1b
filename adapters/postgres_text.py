"""How the PostgreSQL backend keeps text PostgreSQL cannot hold, and reads its rows back.

PostgreSQL's text cannot hold NUL, and records may: NUL is stored as an escape character
followed by "0", and the escape character itself doubled. Rows map to records through the
SQL backends' shared mapper (sql_rows.py), with this backend's DIALECT.
"""

from __future__ import annotations

import re

from lazy_memory.adapters.sql_rows import Dialect

_ESCAPE = "\uffff"
_ESCAPED = re.compile(f"{_ESCAPE}(.)", re.DOTALL)


def stored(text: str) -> str:
    """text as a PostgreSQL text column can hold it: NUL (and the escape) escaped."""
    if "\x00" not in text and _ESCAPE not in text:
        return text
    return text.replace(_ESCAPE, _ESCAPE * 2).replace("\x00", _ESCAPE + "0")


def loaded(text: str) -> str:
    """The text stored was given."""
    if _ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda match: "\x00" if match[1] == "0" else match[1], text)


DIALECT = Dialect(text=loaded, time=None)
"""PostgreSQL keeps text escaped, and asyncpg hands TIMESTAMPTZ over as an aware datetime."""
