"""The PostgreSQL DSN: the check a store makes on opening, and where it points, for messages."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from lazy_memory.engine.errors import InvalidConfig


def describe(dsn: str) -> str:
    """Where a DSN points, as host:port/database, for messages: never its user or password."""
    parts = urlsplit(dsn)
    query = parse_qs(parts.query)
    host = parts.hostname or query.get("host", ["localhost"])[0]
    try:
        port = parts.port or int(query.get("port", ["5432"])[0])
    except ValueError:
        port = 5432
    database = unquote(parts.path.lstrip("/")) or query.get("dbname", [""])[0]
    return f"{host}:{port}/{database or parts.username or 'postgres'}"


def check_dsn(dsn: str) -> None:
    """Raise InvalidConfig unless dsn is a postgres:// or postgresql:// URI with a valid port."""
    parts = urlsplit(dsn)
    try:
        parts.port  # noqa: B018  (parsing it is the check)
    except ValueError:
        valid = False
    else:
        valid = parts.scheme in ("postgres", "postgresql")
    if not valid:
        raise InvalidConfig(
            "the PostgreSQL DSN (LAZY_PG_DSN or [storage] pg_dsn) must be a URI like "
            "postgresql://user@host:5432/database"
        )
