"""Search: the query language, the tokenizing rule every backend shares, and BM25 ranking.

A query is parsed here, with no I/O, into a SearchQuery that every backend answers alike::

    in:memories            the scope: the default, and the only one there is so far
    deploy staging         bare words: a record must hold every one of them
    "make deploy"          a phrase: these words next to each other, in this order
    type:feedback          only records of this type (given twice: either type)
    name:deploy*           only records whose name starts with `deploy` (name:x: exactly x)
    -flaky -"old way"      leave out the records that hold this word or phrase

Text is compared as tokens: runs of letters and digits (in any script), lowercased; anything
else separates them; no stemming, accents kept. A record's name, description and body are
searched, and ranked by BM25 with a match in the name weighing 10, in the description 5 and in
the body 1: exactly the bm25() of SQLite's FTS5, which SearchIndex reproduces in Python for
backends without a full-text engine of their own.
"""

from __future__ import annotations

import heapq
import math
import re
import sys
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

from lazy_memory.engine.errors import InvalidQuery
from lazy_memory.engine.index import collapse_whitespace
from lazy_memory.engine.records import RecordContent, RecordType, is_unicode

SCOPES = ("memories",)
"""What `in:` may name."""

MARK_START = "«"
MARK_END = "»"
"""The pair a snippet puts around each match (the CLI turns them into colour in a terminal)."""

ELLIPSIS = "…"
"""Where a snippet cuts its field's text."""

SNIPPET_TOKENS = 12
"""How many tokens a snippet shows around the matches."""

FIELD_WEIGHTS = (10.0, 5.0, 1.0)
"""BM25 weight of a match in the name, the description and the body."""

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
"""How many hits a search returns unless asked, and at most."""

MAX_TERMS = 100
"""How many terms a query may hold: enough for any question, and well within SQL's limits."""

_BM25_K1 = 1.2
_BM25_B = 0.75
# FTS5 floors the idf of a term found in over half the records here rather than go negative.
_IDF_FLOOR = 1e-6
_TOKEN = re.compile(r"[^\W_]+")
_FILTERS = ("in", "type", "name")
_TYPES = ", ".join(member.value for member in RecordType)
_SHOWN_TERM_LENGTH = 40

_T = TypeVar("_T")

Phrase = tuple[str, ...]
"""A run of tokens that must appear next to each other, in order."""


def tokenize(text: str) -> list[str]:
    """The tokens of text: runs of letters and digits, lowercased; the rule of every backend."""
    # Lowercased first, so that tokenizing a token gives it back (İ lowercases to two
    # characters, the second a combining mark that separates tokens).
    return _TOKEN.findall(text.lower())


class SearchQuery(BaseModel):
    """A parsed query: words and phrases as tokens, the filters, and what is left out.

    A word is one token; a phrase two or more. Words and phrases must all match, in any of
    the name, the description and the body; types and names are alternatives (any of them);
    a record holding an excluded word or phrase is left out.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    words: tuple[str, ...] = ()
    phrases: tuple[Phrase, ...] = ()
    types: tuple[RecordType, ...] = ()
    names: tuple[str, ...] = ()
    name_prefixes: tuple[str, ...] = ()
    excluded_words: tuple[str, ...] = ()
    excluded_phrases: tuple[Phrase, ...] = ()

    @property
    def terms(self) -> tuple[Phrase, ...]:
        """Every word (as a one-token phrase) and phrase that must match, words first."""
        return tuple((word,) for word in self.words) + self.phrases

    @property
    def excluded_terms(self) -> tuple[Phrase, ...]:
        """Every excluded word (as a one-token phrase) and phrase."""
        return tuple((word,) for word in self.excluded_words) + self.excluded_phrases

    @model_validator(mode="after")
    def _well_formed(self) -> SearchQuery:
        # A query built in code or received from a peer obeys what parse_query guarantees:
        # backends quote every token, but rely on each being a real, non-empty one.
        for word in chain(self.words, self.excluded_words):
            if tokenize(word) != [word]:
                raise ValueError(f"{word!r} is not one token of the search tokenizer")
        for phrase in chain(self.phrases, self.excluded_phrases):
            if len(phrase) < 2 or tokenize(" ".join(phrase)) != list(phrase):
                raise ValueError(f"{phrase!r} is not a phrase of two or more tokens")
        for name in chain(self.names, self.name_prefixes):
            if not is_unicode(name):
                raise ValueError(f"{name!r} is not Unicode text")
        if not (self.words or self.phrases or self.types or self.names or self.name_prefixes):
            raise ValueError("a query needs a word, a phrase, a type or a name to look for")
        return self


class SearchHit(BaseModel):
    """One record a search found: its index line's fields, where it matched, and its score."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: RecordType
    description: str
    snippet: str
    score: float
    """Higher is better; 0 for a query of filters only, which ranks by name."""


def parse_query(text: str) -> SearchQuery:
    """Parse a query, or raise InvalidQuery naming the offending term and its column."""
    collected = _Collected()
    for number, term in enumerate(_terms(text), start=1):
        if number > MAX_TERMS:
            raise term.invalid(f"a query holds at most {MAX_TERMS} terms")
        collected.add(term)
    return collected.query()


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


def snippet(query: SearchQuery, *, name: str, description: str, body: str) -> str:
    """About SNIPPET_TOKENS tokens of a record's field where the query's terms match best.

    Each match sits between MARK_START and MARK_END, a cut is marked with ELLIPSIS, and
    whitespace is collapsed to one line. A tie goes to the body, then the description, which
    say more than the name a hit shows anyway; when nothing matches (a query of filters only)
    it is the opening of the body (else of the description, else the name).
    """
    texts = (body, description, name)
    best: _Window | None = None
    for text in texts:
        window = _best_window(text, query.terms)
        if window is not None and (best is None or window.score > best.score):
            best = window
    if best is not None:
        return best.render()
    for text in texts:
        spans = _spans(text)
        if spans:
            return _Window(text, spans, 0, min(len(spans), SNIPPET_TOKENS), []).render()
    return ""


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


@dataclass(frozen=True)
class _Term:
    """One term of a query as written: where it starts, and what it says."""

    column: int
    written: str
    value: str
    excluded: bool
    quoted: bool

    @property
    def shown(self) -> str:
        """The term for a message, cut if it is long, its unprintable characters escaped.

        An unclosed quote runs to the end of the query, line breaks included: escaped, they
        keep the message on one line (and a lone surrogate keeps it encodable).
        """
        written = self.written
        if len(written) > _SHOWN_TERM_LENGTH:
            written = written[: _SHOWN_TERM_LENGTH - 1] + ELLIPSIS
        return "".join(
            character
            if character.isprintable()
            else character.encode("unicode_escape").decode("ascii")
            for character in written
        )

    def invalid(self, problem: str) -> InvalidQuery:
        """The error for this term: it names the term and its column, then the problem."""
        return InvalidQuery(
            f"invalid query: `{self.shown}` at column {self.column}: {problem}",
            column=self.column,
        )


def _terms(text: str) -> Iterator[_Term]:
    """Split text into terms: a bare run of non-space characters, or a quoted phrase."""
    position, length = 0, len(text)
    while position < length:
        if text[position].isspace():
            position += 1
            continue
        start = position
        excluded = text[position] == "-"
        if excluded:
            position += 1
            if position == length or text[position].isspace():
                raise _Term(start + 1, "-", "", True, False).invalid(
                    'a "-" needs a word or a "phrase" right after it'
                )
        if text[position] == '"':
            close = text.find('"', position + 1)
            if close < 0:
                unclosed = _Term(position + 1, text[position:], "", excluded, True)
                raise unclosed.invalid('the quote is never closed: add a " at its end')
            value = text[position + 1 : close]
            position = close + 1
            yield _Term(start + 1, text[start:position], value, excluded, quoted=True)
            continue
        end = position
        # A quote ends a bare word too, so `staging"make deploy"` is a word and a phrase.
        while end < length and not text[end].isspace() and text[end] != '"':
            end += 1
        yield _Term(start + 1, text[start:end], text[position:end], excluded, quoted=False)
        position = end


@dataclass
class _Collected:
    """What parse_query has gathered so far, in the order written, without repeats."""

    words: list[str] = field(default_factory=list)
    phrases: list[Phrase] = field(default_factory=list)
    types: list[RecordType] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    name_prefixes: list[str] = field(default_factory=list)
    excluded_words: list[str] = field(default_factory=list)
    excluded_phrases: list[Phrase] = field(default_factory=list)
    first_exclusion: _Term | None = None
    first_without_tokens: _Term | None = None

    def add(self, term: _Term) -> None:
        """Take in one term, or raise InvalidQuery for it."""
        key, colon, value = term.value.partition(":")
        if colon and not term.quoted and key in _FILTERS:
            if term.excluded:
                raise term.invalid('only words and "phrases" can be excluded')
            self._add_filter(term, key, value)
            return
        tokens = tuple(tokenize(term.value))
        if not tokens:
            if term.quoted:
                raise term.invalid("the phrase has no letters or digits to look for")
            # Punctuation between words (`&`, `*`, `|`) is noise, not a mistake.
            self.first_without_tokens = self.first_without_tokens or term
            return
        if term.excluded:
            self.first_exclusion = self.first_exclusion or term
            words, phrases = self.excluded_words, self.excluded_phrases
        else:
            words, phrases = self.words, self.phrases
        # A bare word such as x-ray is several tokens: it means them together, a phrase.
        if len(tokens) == 1:
            _append_new(words, tokens[0])
        else:
            _append_new(phrases, tokens)

    def query(self) -> SearchQuery:
        """The query, or InvalidQuery if nothing in it says what to look for."""
        if self.words or self.phrases or self.types or self.names or self.name_prefixes:
            return SearchQuery(
                words=tuple(self.words),
                phrases=tuple(self.phrases),
                types=tuple(self.types),
                names=tuple(self.names),
                name_prefixes=tuple(self.name_prefixes),
                excluded_words=tuple(self.excluded_words),
                excluded_phrases=tuple(self.excluded_phrases),
            )
        if self.first_exclusion is not None:
            raise self.first_exclusion.invalid(
                'the query only leaves records out: add a word, a "phrase", type: or name: '
                "to look for"
            )
        if self.first_without_tokens is not None:
            raise self.first_without_tokens.invalid("there are no letters or digits to look for")
        raise InvalidQuery(
            'invalid query: there is nothing to look for: give a word, a "phrase", type: or '
            "name:, e.g. deploy staging"
        )

    def _add_filter(self, term: _Term, key: str, value: str) -> None:
        if key == "in":
            if value not in SCOPES:
                problem = f"unknown scope {value!r}" if value else "in: needs a scope"
                raise term.invalid(f"{problem}; the scopes there are: {', '.join(SCOPES)}")
        elif key == "type":
            try:
                _append_new(self.types, RecordType(value))
            except ValueError:
                problem = f"unknown type {value!r}" if value else "type: needs a type"
                raise term.invalid(f"{problem}; use one of {_TYPES}") from None
        elif not value or value == "*":
            raise term.invalid("name: needs a name, or the start of one followed by *")
        elif not is_unicode(value):
            # A lone surrogate (an undecodable byte of a command line): no name holds one.
            raise term.invalid("the name holds a character that is not Unicode text")
        elif "*" in value[:-1]:
            raise term.invalid("a * may only end a name, as in name:deploy*")
        elif value.endswith("*"):
            _append_new(self.name_prefixes, value[:-1])
        else:
            _append_new(self.names, value)


def _append_new(items: list[_T], item: _T) -> None:
    if item not in items:
        items.append(item)


@dataclass(frozen=True)
class _Window:
    """A run of tokens of one text to show, and the token ranges in it that matched."""

    text: str
    spans: list[tuple[int, int]]
    start: int
    end: int
    marked: list[tuple[int, tuple[int, int]]]
    """(the term's number in the query, the token range it matched), for every match shown."""

    @property
    def score(self) -> tuple[int, int]:
        """Distinct terms shown first, then how many matches: the better window is larger."""
        return (len({term for term, _ in self.marked}), len(self.marked))

    def render(self) -> str:
        """The window's text with each match marked and the cuts shown."""
        first = 0 if self.start == 0 else self.spans[self.start][0]
        last = len(self.text) if self.end == len(self.spans) else self.spans[self.end - 1][1]
        pieces, cursor = [], first
        for start_token, end_token in _merged(range_ for _, range_ in self.marked):
            start, end = self.spans[start_token][0], self.spans[end_token - 1][1]
            pieces += [self.text[cursor:start], MARK_START, self.text[start:end], MARK_END]
            cursor = end
        pieces.append(self.text[cursor:last])
        shown = collapse_whitespace("".join(pieces))
        return (ELLIPSIS if first else "") + shown + (ELLIPSIS if last < len(self.text) else "")


def _spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _TOKEN.finditer(text)]


def _best_window(text: str, terms: Sequence[Phrase]) -> _Window | None:
    """The window of text showing the most distinct terms, then the most matches.

    Windows start at each match in turn (the earliest wins a tie), then shift back to centre
    what they show, as FTS5's snippet() does.
    """
    spans = _spans(text)
    tokens = tuple(text[start:end].lower() for start, end in spans)
    found = sorted(
        ((position, position + len(term)), number)
        for number, term in enumerate(terms)
        for position in range(len(tokens))
        if tokens[position : position + len(term)] == term
    )
    best: _Window | None = None
    for (anchor, _), _ in found:
        shown = [
            match
            for match in found
            if anchor <= match[0][0] < match[0][1] <= anchor + SNIPPET_TOKENS
        ]
        last = max(end for (_, end), _ in shown)
        start = anchor - (SNIPPET_TOKENS - (last - anchor)) // 2
        start = max(0, min(start, len(tokens) - SNIPPET_TOKENS))
        end = min(len(tokens), start + SNIPPET_TOKENS)
        marked = [
            (number, range_) for range_, number in found if start <= range_[0] < range_[1] <= end
        ]
        window = _Window(text, spans, start, end, marked)
        if best is None or window.score > best.score:
            best = window
    return best


def _merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token ranges in order, overlapping ones joined, so no mark sits inside another."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


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
