"""Search's ranking: what a match is, BM25 as FTS5 computes it, and SearchIndex.

A record's name, description and body are searched, and ranked by BM25 with a match in the
name weighing 10, in the description 5 and in the body 1: exactly the bm25() of SQLite's
FTS5, which SearchIndex reproduces in Python for backends without a full-text engine of
their own.
"""

from __future__ import annotations

import heapq
import math
import sys
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_model import Phrase, SearchHit, SearchQuery, tokenize
from lazy_memory.engine.search_snippets import snippet

FIELD_WEIGHTS = (10.0, 5.0, 1.0)
"""BM25 weight of a match in the name, the description and the body."""

_BM25_K1 = 1.2
_BM25_B = 0.75
# FTS5 floors the idf of a term found in over half the records here rather than go negative.
_IDF_FLOOR = 1e-6


def matches(query: SearchQuery, document: Document) -> bool:
    """True if document passes every filter, holds every term and no excluded one."""
    if query.types and document.type not in query.types:
        return False
    if (query.names or query.name_prefixes) and not (
        document.name in query.names
        or any(document.name.startswith(prefix) for prefix in query.name_prefixes)
    ):
        return False
    if not all(document.contains(term) for term in query.terms):
        return False
    return not any(document.contains(term) for term in query.excluded_terms)


def inverse_document_frequency(document_count: int, hits: int) -> float:
    """BM25's idf of a term hits of document_count records hold, as FTS5 computes it."""
    idf = math.log((document_count - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0 else _IDF_FLOOR


def bm25(
    document: Document, terms: Sequence[Phrase], idfs: Sequence[float], average_length: float
) -> float:
    """FTS5's bm25() with FIELD_WEIGHTS, as a positive score: higher is better."""
    norm = 1 - _BM25_B + _BM25_B * document.length / average_length
    score = 0.0
    for term, idf in zip(terms, idfs, strict=True):
        frequency = sum(
            weight * occurrences(tokens, term)
            for tokens, weight in zip(document.fields, FIELD_WEIGHTS, strict=True)
        )
        # Grouped as FTS5 groups it, so equal records tie exactly on every backend.
        score += idf * ((frequency * (_BM25_K1 + 1)) / (frequency + _BM25_K1 * norm))
    return score


def occurrences(tokens: Sequence[str], phrase: Phrase) -> int:
    """How many times phrase starts in tokens."""
    if len(phrase) == 1:
        return tokens.count(phrase[0])
    first, size = phrase[0], len(phrase)
    return sum(
        1
        for position, token in enumerate(tokens)
        if token == first and tuple(tokens[position : position + size]) == phrase
    )


@dataclass(frozen=True)
class Document:
    """A record as search sees it: what a hit shows, and the tokens of each searched field."""

    name: str
    type: RecordType
    description: str
    body: str
    fields: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    length: int

    @classmethod
    def of(cls, record: RecordContent) -> Document:
        """Tokenize a record's name, description and body."""
        # Interned, a store's thousands of repeated tokens are held once.
        name, description, body = (
            tuple(map(sys.intern, tokenize(text)))
            for text in (record.name, record.description, record.body)
        )
        return cls(
            name=record.name,
            type=record.type,
            description=record.description,
            body=record.body,
            fields=(name, description, body),
            length=len(name) + len(description) + len(body),
        )

    def contains(self, term: Phrase) -> bool:
        """True if one of the fields holds term (a phrase never spans two fields)."""
        if len(term) == 1:
            return any(term[0] in tokens for tokens in self.fields)
        return any(occurrences(tokens, term) for tokens in self.fields)

    def hit(self, query: SearchQuery, score: float) -> SearchHit:
        """This record as a search result for query."""
        return SearchHit(
            name=self.name,
            type=self.type,
            description=self.description,
            snippet=snippet(query, name=self.name, description=self.description, body=self.body),
            score=score,
        )


class SearchIndex:
    """An in-memory inverted index of live records, ranked exactly as SQLite's FTS5 ranks.

    It is for a backend with no full-text engine of its own: built once from the records, then
    queried many times. Posting lists narrow the candidates; matches() has the last word.
    """

    def __init__(self, records: Iterable[RecordContent]) -> None:
        self._documents = [Document.of(record) for record in records]
        postings: defaultdict[str, array[int]] = defaultdict(lambda: array("I"))
        for number, document in enumerate(self._documents):
            for token in set(chain.from_iterable(document.fields)):
                postings[token].append(number)
        self._postings = dict(postings)
        total = sum(document.length for document in self._documents)
        self._average_length = total / len(self._documents) if self._documents else 0.0

    def search(self, query: SearchQuery, limit: int) -> list[SearchHit]:
        """The best limit records for query: highest score first, then by name."""
        found = [document for document in self._candidates(query) if matches(query, document)]
        return best_hits(
            query, limit, found, len(self._documents), self._holders, self._average_length
        )

    def _candidates(self, query: SearchQuery) -> Iterable[Document]:
        tokens = {token for term in query.terms for token in term}
        if not tokens:
            return self._documents
        return (self._documents[number] for number in self._holding_all(tokens))

    def _holding_all(self, tokens: set[str]) -> list[int]:
        """Numbers of the documents that hold every token, in some field or other."""
        lists = [self._postings.get(token) for token in tokens]
        if any(postings is None for postings in lists):
            return []
        rarest, *others = sorted((postings for postings in lists if postings), key=len)
        numbers = set(rarest)
        for postings in others:
            numbers.intersection_update(postings)
        return sorted(numbers)

    def _holders(self, term: Phrase) -> int:
        """How many documents hold term: the hits FTS5 counts for a phrase's idf."""
        if len(term) == 1:
            return len(self._postings.get(term[0], ()))
        return sum(
            1 for number in self._holding_all(set(term)) if self._documents[number].contains(term)
        )


def best_hits(
    query: SearchQuery,
    limit: int,
    found: Sequence[Document],
    document_count: int,
    holders: Callable[[Phrase], int],
    average_length: float,
) -> list[SearchHit]:
    """The best limit of found as hits: by BM25 over the whole store, then by name.

    A filter-only query (no terms) lists by name with score 0. holders counts the store's
    documents holding a term, and with document_count and average_length describes the
    whole store, whatever subset found is.
    """
    if not query.terms:
        by_name = heapq.nsmallest(limit, found, key=lambda document: document.name)
        return [document.hit(query, 0.0) for document in by_name]
    terms = query.terms
    idfs = [inverse_document_frequency(document_count, holders(term)) for term in terms]
    scored = [(bm25(document, terms, idfs, average_length), document) for document in found]
    best = heapq.nsmallest(limit, scored, key=lambda pair: (-pair[0], pair[1].name))
    return [document.hit(query, score) for score, document in best]
