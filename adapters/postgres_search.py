"""Search on PostgreSQL: a GIN-indexed tsvector finds the candidates, engine/search ranks them.

Each record's tsvector holds its tokens exactly as search.tokenize makes them, built in
Python and stored with array_to_tsvector, so neither PostgreSQL's parser nor the database's
locale can split text differently from the other backends (the 'simple' configuration over
the raw text would keep `x-ray` and `a.com/b` whole). The index narrows a query to the
records holding every token of some term; matches(), BM25 and the snippet of engine/search
then decide over the statistics of every live record, so the hits, their order and their
snippets are those of every other backend. ts_rank and ts_headline rank and cut
differently, so they are not used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lazy_memory.engine.records import RecordContent
from lazy_memory.engine.search import (
    Document,
    Phrase,
    SearchHit,
    SearchQuery,
    best_hits,
    matches,
    tokenize,
)

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
