"""The query language: the text of a search, parsed into a SearchQuery.

A query is parsed here, with no I/O, into a SearchQuery that every backend answers alike::

    in:memories            the scope: the default, and the only one there is so far
    deploy staging         bare words: a record must hold every one of them
    "make deploy"          a phrase: these words next to each other, in this order
    type:feedback          only records of this type (given twice: either type)
    name:deploy*           only records whose name starts with `deploy` (name:x: exactly x)
    -flaky -"old way"      leave out the records that hold this word or phrase
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from lazy_memory.engine.errors import InvalidQuery
from lazy_memory.engine.records import RecordType, is_unicode
from lazy_memory.engine.search_model import Phrase, SearchQuery, tokenize
from lazy_memory.engine.search_snippets import ELLIPSIS

SCOPES = ("memories",)
"""What `in:` may name."""

MAX_TERMS = 100
"""How many terms a query may hold: enough for any question, and well within SQL's limits."""

_FILTERS = ("in", "type", "name")
_TYPES = ", ".join(member.value for member in RecordType)
_SHOWN_TERM_LENGTH = 40

_T = TypeVar("_T")


def parse_query(text: str) -> SearchQuery:
    """Parse a query, or raise InvalidQuery naming the offending term and its column."""
    collected = _Collected()
    for number, term in enumerate(_terms(text), start=1):
        if number > MAX_TERMS:
            raise term.invalid(f"a query holds at most {MAX_TERMS} terms")
        collected.add(term)
    return collected.query()


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
