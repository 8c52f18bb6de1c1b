"""A SearchQuery as SQLite answers it: an FTS5 MATCH expression and the statement around it.

User text reaches SQLite only as bound parameters, and inside the MATCH expression each term
is an FTS5 string (double-quoted, any quote doubled), so FTS5's own operators, column filters
and prefix stars in a query are just words to look for.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from typing import Any

from lazy_memory.adapters.row_checks import search_problem, unreadable
from lazy_memory.engine.index import UnreadableRecord, collapse_whitespace
from lazy_memory.engine.records import RecordType
from lazy_memory.engine.search_model import Phrase, SearchHit, SearchQuery
from lazy_memory.engine.search_ranking import FIELD_WEIGHTS
from lazy_memory.engine.search_snippets import (
    ELLIPSIS,
    MARK_END,
    MARK_START,
    SNIPPET_TOKENS,
    snippet,
)

_GLOB_SPECIAL = re.compile(r"[*?\[]")


def search_statement(query: SearchQuery, limit: int) -> tuple[str, dict[str, Any]]:
    """The SELECT answering query, and its named parameters.

    Its rows are (name, type, description, body, snippet, score, revision, updated_at): a
    query with words or phrases gets FTS5's snippet and its bm25 score (negated, so higher is
    better) and no body; a query of filters only gets the body, for snippet() to open, and a
    score of 0. The revision and time are only checked, as the index checks them.
    """
    parameters: dict[str, Any] = {"limit": limit}
    filters = _filters(query, parameters)
    excluded = query.excluded_terms
    if not query.terms:
        if excluded:
            parameters["excluded"] = _any_of(excluded)
            filters += (
                " AND records.id NOT IN "
                "(SELECT rowid FROM records_fts WHERE records_fts MATCH :excluded)"
            )
        sql = (
            "SELECT name, type, description, body, NULL, 0.0, revision, updated_at FROM records "
            f"WHERE deleted = 0{filters} ORDER BY name LIMIT :limit"
        )
        return sql, parameters
    match = " AND ".join(_fts_string(term) for term in query.terms)
    if excluded:
        match = f"({match}) NOT ({_any_of(excluded)})"
    weights = ", ".join(f":weight{number}" for number in range(len(FIELD_WEIGHTS)))
    parameters.update({f"weight{number}": w for number, w in enumerate(FIELD_WEIGHTS)})
    parameters.update(
        match=match, start=MARK_START, end=MARK_END, ellipsis=ELLIPSIS, tokens=SNIPPET_TOKENS
    )
    sql = (
        "SELECT records.name, records.type, records.description, NULL, "
        "snippet(records_fts, -1, :start, :end, :ellipsis, :tokens), "
        f"-bm25(records_fts, {weights}) AS score, records.revision, records.updated_at "
        "FROM records_fts JOIN records ON records.id = records_fts.rowid "
        f"WHERE records_fts MATCH :match AND records.deleted = 0{filters} "
        "ORDER BY score DESC, records.name LIMIT :limit"
    )
    return sql, parameters


def search_hit(row: sqlite3.Row, query: SearchQuery) -> SearchHit | UnreadableRecord:
    """One row of search_statement's answer as a hit, or why it cannot be read."""
    name, type_, description, body, found_snippet, score, revision, at = row
    # The snippet comes from the body when it is not the name's or the description's.
    text = body if found_snippet is None else found_snippet
    problem = search_problem(name, type_, description, text, revision, at, datetime.fromisoformat)
    if problem is not None:
        return unreadable(name, problem)
    return SearchHit(
        name=name,
        type=RecordType(type_),
        description=description,
        snippet=(
            snippet(query, name=name, description=description, body=body)
            if found_snippet is None
            else collapse_whitespace(found_snippet)
        ),
        score=score,
    )


def _filters(query: SearchQuery, parameters: dict[str, Any]) -> str:
    """The type and name conditions, as SQL over the records table, adding their parameters."""
    sql = ""
    if query.types:
        parameters.update({f"type{n}": kind.value for n, kind in enumerate(query.types)})
        sql += f" AND records.type IN ({_placeholders('type', len(query.types))})"
    if query.names or query.name_prefixes:
        parameters.update({f"name{n}": name for n, name in enumerate(query.names)})
        parameters.update(
            {f"prefix{n}": _glob_prefix(p) for n, p in enumerate(query.name_prefixes)}
        )
        alternatives = [f"records.name GLOB :prefix{n}" for n in range(len(query.name_prefixes))]
        if query.names:
            alternatives.append(f"records.name IN ({_placeholders('name', len(query.names))})")
        sql += f" AND ({' OR '.join(alternatives)})"
    return sql


def _placeholders(stem: str, count: int) -> str:
    return ", ".join(f":{stem}{number}" for number in range(count))


def _glob_prefix(prefix: str) -> str:
    """A GLOB pattern for names starting with prefix: case-sensitive, its wildcards escaped."""
    return _GLOB_SPECIAL.sub(lambda special: f"[{special.group()}]", prefix) + "*"


def _any_of(terms: tuple[Phrase, ...]) -> str:
    return " OR ".join(_fts_string(term) for term in terms)


def _fts_string(term: Phrase) -> str:
    """term as one FTS5 string: a phrase of its tokens, never an operator."""
    return '"' + " ".join(term).replace('"', '""') + '"'
