"""Search on PostgreSQL: a GIN-indexed tsvector finds the candidates, the engine ranks them.

Each record's tsvector holds its tokens exactly as search_model.tokenize makes them, built in
Python and stored with array_to_tsvector, so neither PostgreSQL's parser nor the database's
locale can split text differently from the other backends (the 'simple' configuration over
the raw text would keep `x-ray` and `a.com/b` whole). The index narrows a query to the
records holding every token of some term; matches(), BM25 and the snippet of
engine/search_ranking.py then decide over the statistics of every live record, so the hits,
their order and their snippets are those of every other backend. ts_rank and ts_headline
rank and cut differently, so they are not used.

candidates() is the SELECT of a query's candidates, hits() ranks the rows it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lazy_memory.adapters.postgres.text import DIALECT, json_list, loaded, stored, text_list
from lazy_memory.adapters.row_checks import search_problem, unreadable
from lazy_memory.engine.errors import UnreadableRecords
from lazy_memory.engine.kinds import RECORD_TYPES
from lazy_memory.engine.records import RecordContent
from lazy_memory.engine.search_model import Phrase, SearchHit, SearchQuery, tokenize
from lazy_memory.engine.search_ranking import Document, best_hits, matches

MAX_LEXEME_BYTES = 2000
"""Longer tokens are left out of the tsvector (PostgreSQL refuses over 2047 bytes)."""
MAX_TSVECTOR_BYTES = 1_000_000
"""A record whose distinct tokens take more is not indexed (a tsvector holds 1 MiB)."""


@dataclass(frozen=True)
class SearchColumns:
    """What a record row keeps for search: its tsvector's lexemes, and its length in tokens.

    lexemes is None for a record too large to index: it is a candidate of every query.
    """

    lexemes: list[str] | None
    length: int


def search_columns(content: RecordContent) -> SearchColumns:
    """The search columns of a record with content."""
    tokens = [
        token
        for text in (content.name, content.description, content.body)
        for token in tokenize(text)
    ]
    indexed = {token for token in tokens if _size(token) <= MAX_LEXEME_BYTES}
    if sum(map(_size, indexed)) > MAX_TSVECTOR_BYTES:
        return SearchColumns(None, len(tokens))
    return SearchColumns(sorted(indexed), len(tokens))


def candidate_query(query: SearchQuery) -> str | None:
    """A tsquery every record holding some term of query matches; None when it cannot narrow.

    Phrases narrow to records holding each of their tokens (positions are not indexed);
    matches() checks the order afterwards.
    """
    clauses = []
    for term in query.terms:
        lexemes = [token for token in term if _size(token) <= MAX_LEXEME_BYTES]
        if not lexemes:
            return None
        clauses.append("(" + " & ".join(map(_quoted, lexemes)) + ")")
    return " | ".join(clauses) or None


def candidates(query: SearchQuery) -> tuple[str, list[Any]]:
    """The SELECT of query's candidates (after $1, the project) and its arguments.

    With words or phrases, every live record holding a term is a candidate, whatever its
    type or name, since the terms' idf counts them all; a query of filters only
    selects by type and name. Each row also carries the project's count of live records
    and of their tokens, read in the same statement, so from the same snapshot.
    """
    sql = (
        "SELECT name, type, description, body, statistics.records, statistics.tokens, "
        "revision, updated_at "
        "FROM lazy_records, (SELECT count(*) AS records, "
        "coalesce(sum(search_length), 0) AS tokens FROM lazy_records "
        "WHERE project = $1 AND NOT deleted) AS statistics "
        "WHERE project = $1 AND NOT deleted"
    )
    arguments: list[Any] = []
    if query.terms:
        tsquery = candidate_query(query)
        if tsquery is not None:
            arguments.append(tsquery)
            sql += " AND (search IS NULL OR search @@ $2::text::tsquery)"
        return sql, arguments
    if query.types:
        arguments.append([kind.value for kind in query.types])
        sql += f" AND type = ANY(${len(arguments) + 1}::text[])"
    if query.names or query.name_prefixes:
        arguments.append(json_list(stored(name) for name in query.names))
        alternatives = [f"name = ANY({text_list(len(arguments) + 1)})"]
        for prefix in query.name_prefixes:
            arguments.append(stored(prefix))
            alternatives.append(f"starts_with(name, ${len(arguments) + 1})")
        sql += f" AND ({' OR '.join(alternatives)})"
    return sql, arguments


def hits(query: SearchQuery, limit: int, rows: Sequence[Any], where: str) -> list[SearchHit]:
    """The best limit of the rows candidates() selected, ranked as ranked() ranks them;
    UnreadableRecords with them, naming the candidates that do not read (where: the store)."""
    if not rows:
        return []
    failed = []
    contents = []
    for name, type_, description, body, _records, _tokens, revision, at in rows:
        problem = search_problem(name, type_, description, body, revision, at, DIALECT.parse)
        if problem is not None:
            failed.append(unreadable(name, problem))
            continue
        contents.append(
            RecordContent(
                name=loaded(name),
                type=RECORD_TYPES[type_],
                description=loaded(description),
                body=loaded(body),
            )
        )
    found = ranked(query, limit, contents, rows[0]["records"], rows[0]["tokens"])
    if failed:
        raise UnreadableRecords.found(where, failed, found)
    return found


def ranked(
    query: SearchQuery,
    limit: int,
    candidates: Iterable[RecordContent],
    document_count: int,
    total_length: int,
) -> list[SearchHit]:
    """The best limit candidates for query, ranked as SearchIndex ranks a whole store.

    candidates hold (at least) every live record holding a term of query, whatever its type
    or name, so each term's idf counts what it would over the whole store; document_count
    and total_length are the whole store's.
    """
    documents = [Document.of(candidate) for candidate in candidates]
    found = [document for document in documents if matches(query, document)]
    average_length = total_length / document_count if document_count else 0.0

    def holders(term: Phrase) -> int:
        return sum(1 for document in documents if document.contains(term))

    return best_hits(query, limit, found, document_count, holders, average_length)


def _size(token: str) -> int:
    return len(token.encode("utf-8"))


def _quoted(lexeme: str) -> str:
    """lexeme as a tsquery operand, taken verbatim whatever characters it holds."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
