"""What a search is, for every backend alike: the tokenizing rule, SearchQuery and SearchHit.

Text is compared as tokens: runs of letters and digits (in any script), lowercased; anything
else separates them; no stemming, accents kept. search_parser.py turns a query's text into a
SearchQuery; a backend answers it with SearchHits.
"""

from __future__ import annotations

import re
from itertools import chain

from pydantic import BaseModel, ConfigDict, model_validator

from lazy_memory.engine.records import RecordType, is_unicode

_TOKEN = re.compile(r"[^\W_]+")

Phrase = tuple[str, ...]
"""A run of tokens that must appear next to each other, in order."""


def tokenize(text: str) -> list[str]:
    """The tokens of text: runs of letters and digits, lowercased; the rule of every backend."""
    # Lowercased first, so that tokenizing a token gives it back (İ lowercases to two
    # characters, the second a combining mark that separates tokens).
    return _TOKEN.findall(text.lower())


def token_spans(text: str) -> list[tuple[int, int]]:
    """Where each token of text starts and ends, as it is written (not lowercased)."""
    return [match.span() for match in _TOKEN.finditer(text)]


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
