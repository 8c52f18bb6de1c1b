"""The names search_*.py hold, importable from here for modules not yet moved to those.

search_model.py holds the tokenizing rule, SearchQuery and SearchHit; search_parser.py the
query language; search_snippets.py the snippets; search_ranking.py matching, BM25 and
SearchIndex. Delete this module once nothing imports from it.
"""

from __future__ import annotations

from lazy_memory.engine.search_model import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    Phrase,
    SearchHit,
    SearchQuery,
    tokenize,
)
from lazy_memory.engine.search_parser import parse_query
from lazy_memory.engine.search_ranking import (
    FIELD_WEIGHTS,
    Document,
    SearchIndex,
    best_hits,
    matches,
)
from lazy_memory.engine.search_snippets import (
    ELLIPSIS,
    MARK_END,
    MARK_START,
    SNIPPET_TOKENS,
    snippet,
)

__all__ = [
    "DEFAULT_LIMIT",
    "ELLIPSIS",
    "FIELD_WEIGHTS",
    "MARK_END",
    "MARK_START",
    "MAX_LIMIT",
    "SNIPPET_TOKENS",
    "Document",
    "Phrase",
    "SearchHit",
    "SearchIndex",
    "SearchQuery",
    "best_hits",
    "matches",
    "parse_query",
    "snippet",
    "tokenize",
]
