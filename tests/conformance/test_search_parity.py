"""Search conformance: every backend finds the same records for a query, and ranks them alike."""

from __future__ import annotations

import pytest

from bench.corpus import CORPUS_ACTOR, fill_store, realistic_records
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_model import SearchHit
from lazy_memory.engine.search_parser import parse_query
from lazy_memory.engine.search_ranking import Document, SearchIndex, matches
from lazy_memory.engine.search_snippets import MARK_END, MARK_START
from tests.support.actors import ALICE
from tests.support.clocks import T0
from tests.support.stores import OpenStorage

CORPUS_SEED = 11
CORPUS_SIZE = 200

HOSTILE_TEXT = (
    '"a" OR b NEAR(c d) name:* ^x {body} : x* \'; DROP TABLE records; -- %_ [glob] "unclosed'
)
"""FTS5 operators, column filters, SQL and LIKE/GLOB wildcards, as record text."""

EXTRA_RECORDS = (
    RecordContent(
        name="hostile-text",
        type=RecordType.REFERENCE,
        description="What a query parser must survive",
        body=HOSTILE_TEXT,
    ),
    RecordContent(
        name="unicode-notes",
        type=RecordType.USER,
        description="Größe café naïve: accents are kept, case is folded",
        body="Привет мир. 日本語のテキスト. Ελληνικά γράμματα. x²",
    ),
    RecordContent(
        name="glob?name[1]",
        type=RecordType.PROJECT,
        description="An imported name with GLOB wildcards in it",
        body="Imports keep the name they find.",
    ),
    RecordContent(
        name="globxname-1",
        type=RecordType.PROJECT,
        description="What an unescaped GLOB wildcard would also match",
        body="Imports keep the name they find.",
    ),
)

PARITY_QUERIES = (
    "deploy",
    "deploy qa",
    '"make deploy"',
    '"deploy qa"',
    "redis cache",
    "redis -cache",
    'postgres -"real postgres"',
    "type:feedback",
    "type:user type:reference",
    "type:project deploy",
    "name:deploy*",
    "name:deploy* -production",
    "name:runbook* disk",
    "name:hostile-text",
    "name:glob*",
    "name:glob?*",
    "name:glob?name[*",
    "name:glob?name[1]",
    "the",
    "in:memories credentials",
    "media pipeline owns",
    "sessions_daily",
    "OOM kills",
    '"a" OR b',
    "NEAR(",
    "'; DROP TABLE",
    "x* ^x",
    "GRÖßE größe",
    "привет",
    "日本語のテキスト",
    "x²",
    "api gateway -auth -billing",
    "flaky pytest-xdist",
)
"""Queries over words, phrases, filters, exclusions and hostile input, for the parity test."""


def parity_corpus() -> list[RecordContent]:
    """The fixed store every backend is filled with: realistic records and the odd ones."""
    return [*realistic_records(CORPUS_SIZE, CORPUS_SEED), *EXTRA_RECORDS]


def reference_names(records: list[RecordContent], query_text: str) -> set[str]:
    """The names matches() says the query finds: what every backend must return."""
    query = parse_query(query_text)
    return {record.name for record in records if matches(query, Document.of(record))}


async def save(storage: Storage, name: str, description: str, body: str, **fields: str) -> None:
    await storage.save_record(
        RecordContent(
            name=name,
            type=RecordType(fields.get("type", "project")),
            description=description,
            body=body,
        ),
        actor=ALICE,
        at=T0,
    )


async def names(storage: Storage, query_text: str, limit: int = 200) -> list[str]:
    return [hit.name for hit in await storage.search(parse_query(query_text), limit)]


@pytest.fixture
async def corpus(storage: Storage) -> list[RecordContent]:
    """The storage under test, filled with the parity corpus."""
    records = parity_corpus()
    await fill_store(storage, CORPUS_SIZE, CORPUS_SEED)
    for record in EXTRA_RECORDS:
        await storage.save_record(record, actor=CORPUS_ACTOR, at=T0)
    return records


async def test_every_backend_finds_the_names_the_reference_matcher_finds(
    storage: Storage, corpus: list[RecordContent]
) -> None:
    found = {query: set(await names(storage, query)) for query in PARITY_QUERIES}

    expected = {query: reference_names(corpus, query) for query in PARITY_QUERIES}
    assert found == expected
    assert all(expected.values()), "every query finds something, so the test has teeth"


async def test_every_backend_ranks_as_the_reference_index_does(
    storage: Storage, corpus: list[RecordContent]
) -> None:
    reference = SearchIndex(corpus)
    for query in PARITY_QUERIES:
        parsed = parse_query(query)
        expected = [(hit.name, hit.score) for hit in reference.search(parsed, 200)]

        found = [(hit.name, hit.score) for hit in await storage.search(parsed, 200)]

        assert [name for name, _ in found] == [name for name, _ in expected], query
        assert [score for _, score in found] == pytest.approx(
            [score for _, score in expected], rel=1e-9
        ), query


async def test_hits_are_ranked_best_first_then_by_name(
    storage: Storage, corpus: list[RecordContent]
) -> None:
    for query in ("deploy staging", "redis", "type:feedback", "the"):
        hits = await storage.search(parse_query(query), 200)
        keys = [(-hit.score, hit.name) for hit in hits]
        assert keys == sorted(keys), query


async def test_the_limit_keeps_the_best_hits(storage: Storage, corpus: list[RecordContent]) -> None:
    everything = await names(storage, "deploy")
    assert len(everything) > 5
    assert await names(storage, "deploy", limit=5) == everything[:5]


async def test_all_words_must_match_anywhere_in_the_record(storage: Storage) -> None:
    await save(storage, "deploy-steps", "How we deploy", "Run make release on staging.")
    await save(storage, "staging-db", "The staging database", "Lives in eu-west-1.")

    assert await names(storage, "deploy staging") == ["deploy-steps"]
    assert await names(storage, "DEPLOY Staging") == ["deploy-steps"]
    assert set(await names(storage, "staging")) == {"deploy-steps", "staging-db"}
    assert await names(storage, "deploy nowhere") == []


async def test_a_phrase_needs_its_words_together_in_order_in_one_field(storage: Storage) -> None:
    await save(storage, "together", "Run make deploy first", "body")
    await save(storage, "reversed", "Deploy, then make coffee", "body")
    await save(storage, "split-across-fields", "We always make", "deploy afterwards")

    assert await names(storage, '"make deploy"') == ["together"]
    assert set(await names(storage, "make deploy")) == {
        "together",
        "reversed",
        "split-across-fields",
    }


async def test_a_bare_word_with_punctuation_is_a_phrase(storage: Storage) -> None:
    await save(storage, "xray", "The x-ray machine", "body")
    await save(storage, "apart", "x marks the ray", "body")

    assert await names(storage, "x-ray") == ["xray"]
    assert await names(storage, '"x ray"') == ["xray"]


async def test_type_and_name_filters(storage: Storage) -> None:
    await save(storage, "deploy-steps", "How we deploy", "b", type="project")
    await save(storage, "deploy-style", "Deploy feedback", "b", type="feedback")
    await save(storage, "redeploy", "Deploy again", "b", type="reference")
    await save(storage, "user-prefs", "Likes to deploy on Fridays", "b", type="user")

    assert await names(storage, "deploy type:feedback") == ["deploy-style"]
    assert set(await names(storage, "deploy type:feedback type:user")) == {
        "deploy-style",
        "user-prefs",
    }
    assert await names(storage, "type:reference") == ["redeploy"]
    assert await names(storage, "name:deploy*") == ["deploy-steps", "deploy-style"]
    assert await names(storage, "name:deploy") == []
    assert await names(storage, "name:deploy-steps") == ["deploy-steps"]
    assert await names(storage, "name:redeploy name:user-prefs deploy") == [
        "redeploy",
        "user-prefs",
    ]
    assert await names(storage, "name:deploy* type:feedback") == ["deploy-style"]
    assert await names(storage, "name:Deploy*") == [], "names are compared exactly as written"


async def test_a_query_of_filters_only_ranks_by_name_with_a_snippet_of_the_body(
    storage: Storage,
) -> None:
    await save(storage, "b-second", "The second", "Body of the second record.")
    await save(storage, "a-first", "The first", "Body of the first record.")

    hits = await storage.search(parse_query("type:project"), 10)

    assert [(hit.name, hit.score) for hit in hits] == [("a-first", 0.0), ("b-second", 0.0)]
    assert hits[0].snippet == "Body of the first record."


async def test_excluded_words_and_phrases_leave_records_out(storage: Storage) -> None:
    await save(storage, "new-way", "Deploy with make deploy", "b")
    await save(storage, "old-way", "Deploy the old way", "ssh in and copy files")
    await save(storage, "flaky", "Deploy is flaky on Mondays", "b")

    assert await names(storage, "deploy -flaky") == ["new-way", "old-way"]
    assert await names(storage, 'deploy -"old way" -flaky') == ["new-way"]
    assert await names(storage, "deploy -ssh") == ["new-way", "flaky"]
    assert await names(storage, "type:project -deploy") == []
    assert await names(storage, 'type:project -"way deploy"') == [
        "flaky",
        "new-way",
        "old-way",
    ]


async def test_a_name_match_ranks_above_a_description_match_above_a_body_match(
    storage: Storage,
) -> None:
    filler = "Some words that say nothing in particular about anything at all."
    await save(storage, "in-body", "Unrelated summary of things", f"{filler} kafka")
    await save(storage, "in-description", "Where kafka lives", filler)
    await save(storage, "kafka", "Unrelated summary of things", filler)
    for number in range(5):
        await save(storage, f"other-{number}", "Unrelated summary of things", filler)

    hits = await storage.search(parse_query("kafka"), 10)

    assert [hit.name for hit in hits] == ["kafka", "in-description", "in-body"]
    assert hits[0].score > hits[1].score > hits[2].score > 0


async def test_a_hit_carries_the_index_line_fields_and_a_marked_snippet(storage: Storage) -> None:
    await save(storage, "deploy-steps", "How we deploy", "First run the tests.\nThen make deploy.")

    [hit] = await storage.search(parse_query('"make deploy"'), 10)

    assert isinstance(hit, SearchHit)
    assert (hit.name, hit.type, hit.description) == (
        "deploy-steps",
        RecordType.PROJECT,
        "How we deploy",
    )
    assert f"{MARK_START}make deploy{MARK_END}" in hit.snippet
    assert "\n" not in hit.snippet


async def test_removed_records_never_appear_and_a_revived_one_does(storage: Storage) -> None:
    await save(storage, "deploy-steps", "How we deploy", "zebra")
    await save(storage, "other", "Another zebra", "b")
    await storage.remove_record("deploy-steps", actor=ALICE, at=T0)

    assert await names(storage, "zebra") == ["other"]
    assert await names(storage, "name:deploy-steps") == []
    assert await names(storage, "type:project") == ["other"]

    await save(storage, "deploy-steps", "Revived", "now about giraffes")

    assert await names(storage, "giraffes") == ["deploy-steps"]
    assert await names(storage, "zebra") == ["other"], "the old content is not searched"


async def test_an_update_replaces_what_search_finds(storage: Storage) -> None:
    await save(storage, "note", "About zebras", "stripes")
    await save(storage, "note", "About giraffes", "necks")

    assert await names(storage, "zebras") == []
    assert await names(storage, "stripes") == []
    assert await names(storage, "giraffes necks") == ["note"]


async def test_a_second_handle_finds_what_the_first_wrote(open_store: OpenStorage) -> None:
    first, second = await open_store(), await open_store()
    await save(first, "one", "The first zebra", "b")
    assert await names(second, "zebra") == ["one"]

    await save(first, "two", "The second zebra", "b")
    await first.remove_record("one", actor=ALICE, at=T0)

    assert await names(second, "zebra") == ["two"]


async def test_query_and_record_text_that_looks_like_sql_or_fts_is_only_text(
    storage: Storage,
) -> None:
    await save(storage, "hostile", "What a parser must survive", HOSTILE_TEXT)
    await save(storage, "bystander", "An ordinary record", "about a and b and c")

    assert await names(storage, '"a" OR b') == ["hostile"]
    assert await names(storage, "NEAR(") == ["hostile"]
    assert await names(storage, "'; DROP TABLE records; --") == ["hostile"]
    assert await names(storage, "x* ^x") == ["hostile"]
    assert await names(storage, "{body} glob") == ["hostile"]
    assert set(await names(storage, "a b")) == {"bystander", "hostile"}
    assert [record.name for record in await storage.list_records()] == ["bystander", "hostile"]


async def test_an_empty_store_finds_nothing(storage: Storage) -> None:
    assert await names(storage, "anything") == []
    assert await names(storage, "type:user") == []
