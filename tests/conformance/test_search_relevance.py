"""Search quality: every backend ranks the relevance set's answers first often enough."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.corpus import CORPUS_ACTOR
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.search_parser import parse_query
from tests.support.search_relevance import QUERIES, RANKED_HITS, quality, relevance_records

MINIMUM_MEAN_RECIPROCAL_RANK = 0.8
MINIMUM_TOP3 = 0.85


async def test_the_relevance_set_ranks_well_enough(storage: Storage) -> None:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    for minute, record in enumerate(relevance_records()):
        await storage.save_record(record, actor=CORPUS_ACTOR, at=start + timedelta(minutes=minute))

    ranked = {
        query: [hit.name for hit in await storage.search(parse_query(query), RANKED_HITS)]
        for query, _ in QUERIES
    }

    scored = quality(ranked)
    assert len(QUERIES) >= 30
    assert scored.mean_reciprocal_rank >= MINIMUM_MEAN_RECIPROCAL_RANK, scored
    assert scored.top3 >= MINIMUM_TOP3, scored
