"""How the PostgreSQL backend keeps text PostgreSQL cannot hold, and reads its rows back.

PostgreSQL's text cannot hold NUL, and records may: NUL is stored as an escape character
followed by "0", and the escape character itself doubled. Rows map to records through the
SQL backends' shared mapper (sql_rows.py), with this backend's DIALECT.

A database in the SQL_ASCII encoding keeps whatever bytes it is given, unchecked: a row
another tool wrote may hold text that is not UTF-8. The server refuses to convert such text
for a UTF-8 client, and so fails the whole statement that reads it (a search that meets one
such body would fail every time). So a connection to such a database is a SQL_ASCII client
(PooledConnection, lenient_connection), which the server sends the bytes as they are; this backend
writes UTF-8 and reads text and JSON back with row_checks.lenient_text, so that a value that
is not UTF-8 names its record as one the store cannot read, and every other record reads.
Only text and JSON take those codecs: asyncpg encodes an array or a tsquery with its own,
which on a SQL_ASCII client takes ASCII only, so a list of texts goes as JSON (text_list)
and a tsquery as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import asyncpg

from lazy_memory.adapters.row_checks import as_text, lenient_text
from lazy_memory.adapters.sql_rows import Dialect

RAW_ENCODING = "SQL_ASCII"
"""The server encoding that keeps bytes unchecked, and the client encoding that gets them so."""

_ESCAPE = "\uffff"
_ESCAPED = re.compile(f"{_ESCAPE}(.)", re.DOTALL)


def stored(text: str) -> str:
    """text as a PostgreSQL text column can hold it: NUL (and the escape) escaped."""
    if "\x00" not in text and _ESCAPE not in text:
        return text
    return text.replace(_ESCAPE, _ESCAPE * 2).replace("\x00", _ESCAPE + "0")


def loaded(text: str) -> str:
    """The text stored was given (a name that is not UTF-8 as `\\xNN` escapes)."""
    if type(text) is not str:
        return as_text(text)
    if _ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda match: "\x00" if match[1] == "0" else match[1], text)


DIALECT = Dialect(text=loaded, time=None)
"""PostgreSQL keeps text escaped, and asyncpg hands TIMESTAMPTZ over as an aware datetime."""


class PooledConnection(asyncpg.Connection):
    """A pooled connection that stays a SQL_ASCII client on a SQL_ASCII database: the pool
    resets a connection it takes back (RESET ALL), which would make it a UTF-8 client again."""

    def get_reset_query(self) -> str:
        """The pool's reset, and on a SQL_ASCII database the client encoding set again."""
        query: str = super().get_reset_query()
        if self.get_settings().server_encoding != RAW_ENCODING:
            return query
        return f"{query}\nSET client_encoding = '{RAW_ENCODING}';"


async def lenient_connection(connection: Any) -> None:
    """Make a new connection to a SQL_ASCII database read its bytes as they are (the pool's
    init): text and JSON written as UTF-8, read with lenient_text. Others stay as they are."""
    if connection.get_settings().server_encoding != RAW_ENCODING:
        return
    await connection.execute(f"SET client_encoding = '{RAW_ENCODING}'")
    for name in ("text", "json"):
        await connection.set_type_codec(
            name, schema="pg_catalog", encoder=_utf8, decoder=lenient_text, format="binary"
        )


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def text_list(number: int) -> str:
    """The SQL of parameter number as a text[] (NULL stays NULL): its value a JSON list
    (json_list)."""
    value = f"${number}::json"
    return (
        f"CASE WHEN {value} IS NULL THEN NULL "
        f"ELSE ARRAY(SELECT json_array_elements_text({value})) END"
    )


def json_list(texts: Iterable[str]) -> str:
    """The value of a text_list parameter: JSON escapes only controls, which a SQL_ASCII
    database reads as well (stored text holds no NUL, which json_array_elements_text refuses)."""
    return json.dumps(list(texts), ensure_ascii=False)
