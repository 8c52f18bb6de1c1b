"""Snippets: the few tokens of a record's field where a query's terms match best, marked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lazy_memory.engine.index import collapse_whitespace
from lazy_memory.engine.search_model import Phrase, SearchQuery, token_spans

MARK_START = "«"
MARK_END = "»"
"""The pair a snippet puts around each match (the CLI turns them into colour in a terminal)."""

ELLIPSIS = "…"
"""Where a snippet cuts its field's text."""

SNIPPET_TOKENS = 12
"""How many tokens a snippet shows around the matches."""


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
        spans = token_spans(text)
        if spans:
            return _Window(text, spans, 0, min(len(spans), SNIPPET_TOKENS), []).render()
    return ""


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


def _best_window(text: str, terms: Sequence[Phrase]) -> _Window | None:
    """The window of text showing the most distinct terms, then the most matches.

    Windows start at each match in turn (the earliest wins a tie), then shift back to centre
    what they show, as FTS5's snippet() does.
    """
    spans = token_spans(text)
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
