"""The search language, the tokenizing rule, snippets and the in-memory index, built directly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.corpus import realistic_records
from lazy_memory.adapters.sqlite.storage import SqliteStorage
from lazy_memory.engine.errors import InvalidQuery
from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind, RecordContent, RecordType
from lazy_memory.engine.search_model import SearchQuery, tokenize
from lazy_memory.engine.search_parser import MAX_TERMS, parse_query
from lazy_memory.engine.search_ranking import Document, SearchIndex, matches
from lazy_memory.engine.search_snippets import (
    ELLIPSIS,
    MARK_END,
    MARK_START,
    SNIPPET_TOKENS,
    snippet,
)
from lazy_memory.engine.service import MemoryService
from tests.support.clocks import NOON, FixedClock


def test_tokens_are_lowercased_runs_of_letters_and_digits_in_any_script() -> None:
    assert tokenize("Deploy-Steps: run `make deploy` (v2.1)") == [
        "deploy",
        "steps",
        "run",
        "make",
        "deploy",
        "v2",
        "1",
    ]
    assert tokenize("sessions_daily") == ["sessions", "daily"]
    assert tokenize("Größe café Привет 日本語 x² ΑΒΓ") == [
        "größe",
        "café",
        "привет",
        "日本語",
        "x²",
        "αβγ",
    ]
    assert tokenize("deploys deploying") == ["deploys", "deploying"], "no stemming"
    assert tokenize("*** -- '; ") == []


def test_tokenizing_a_token_gives_it_back() -> None:
    for text in ("İstanbul", "ǅemal", "Ⅻ", "ß"):
        for token in tokenize(text):
            assert tokenize(token) == [token]


def test_words_phrases_and_exclusions() -> None:
    query = parse_query('deploy Staging "make deploy" -flaky -"old way" deploy "STAGING"')

    assert query.words == ("deploy", "staging")
    assert query.phrases == (("make", "deploy"),)
    assert query.excluded_words == ("flaky",)
    assert query.excluded_phrases == (("old", "way"),)
    assert query.terms == (("deploy",), ("staging",), ("make", "deploy"))


def test_a_word_with_punctuation_inside_is_a_phrase_and_punctuation_alone_is_noise() -> None:
    assert parse_query("x-ray & sessions_daily |").phrases == (
        ("x", "ray"),
        ("sessions", "daily"),
    )
    assert parse_query("x-ray & sessions_daily |").words == ()


def test_a_quote_ends_a_bare_word() -> None:
    query = parse_query('staging"make deploy"')

    assert (query.words, query.phrases) == (("staging",), (("make", "deploy"),))


def test_the_scope_types_and_names() -> None:
    query = parse_query(
        "in:memories type:feedback type:user name:deploy* name:style name:deploy* in:memories"
    )

    assert query.types == (RecordType.FEEDBACK, RecordType.USER)
    assert query.name_prefixes == ("deploy",)
    assert query.names == ("style",)
    assert query.words == ()


def test_an_unknown_key_is_part_of_the_text() -> None:
    assert parse_query("localhost:8000 path:line").phrases == (
        ("localhost", "8000"),
        ("path", "line"),
    )
    assert parse_query('"type:user"').phrases == (("type", "user"),)


def test_fts_and_sql_syntax_is_only_words() -> None:
    query = parse_query('"a" OR b NEAR(c) x* ^y')
    assert (query.words, query.phrases) == (("a", "or", "b", "x", "y"), (("near", "c"),))
    assert parse_query("'; DROP TABLE records; --").words == ("drop", "table", "records")


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ('deploy "make deploy', 8, '`"make deploy` at column 8: the quote is never closed'),
        ('deploy -"old way', 9, "at column 9: the quote is never closed"),
        ("deploy -", 8, '`-` at column 8: a "-" needs a word or a "phrase" right after it'),
        ("- deploy", 1, 'at column 1: a "-" needs a word'),
        (
            "in:notes deploy",
            1,
            "`in:notes` at column 1: unknown scope 'notes'; the scopes there are: memories",
        ),
        ("deploy in:", 8, "`in:` at column 8: in: needs a scope; the scopes there are: memories"),
        (
            "type: deploy",
            1,
            "`type:` at column 1: type: needs a type; use one of user, feedback, "
            "project, reference",
        ),
        (
            "deploy type:opinion",
            8,
            "`type:opinion` at column 8: unknown type 'opinion'; use one of user",
        ),
        ("type:Project", 1, "unknown type 'Project'"),
        ("name: deploy", 1, "`name:` at column 1: name: needs a name"),
        ("deploy name:*", 8, "`name:*` at column 8: name: needs a name"),
        ("name:de*ploy", 1, "`name:de*ploy` at column 1: a * may only end a name"),
        (
            "deploy -type:user",
            8,
            '`-type:user` at column 8: only words and "phrases" can be excluded',
        ),
        ("deploy -name:x", 8, "only words and"),
        ('deploy ""', 8, '`""` at column 8: the phrase has no letters or digits to look for'),
        ('deploy "***"', 8, "the phrase has no letters or digits"),
        ('  -flaky -"old way"', 3, "`-flaky` at column 3: the query only leaves records out"),
        ("in:memories -flaky", 13, "at column 13: the query only leaves records out"),
        ("*** &", 1, "`***` at column 1: there are no letters or digits to look for"),
        ("in:memories ...", 13, "`...` at column 13: there are no letters or digits"),
    ],
)
def test_a_malformed_query_names_the_term_and_its_column(
    text: str, column: int, message: str
) -> None:
    with pytest.raises(InvalidQuery) as raised:
        parse_query(text)

    assert raised.value.column == column
    assert message in raised.value.message
    assert raised.value.message.startswith("invalid query: ")
    assert "\n" not in raised.value.message


def test_a_query_holds_at_most_a_hundred_terms() -> None:
    assert len(parse_query(" ".join(f"w{n}" for n in range(MAX_TERMS))).words) == MAX_TERMS

    with pytest.raises(InvalidQuery, match="at most 100 terms") as raised:
        parse_query("w " * MAX_TERMS + "-last")

    assert raised.value.column == 2 * MAX_TERMS + 1


@pytest.mark.parametrize("text", ["", "   ", "in:memories", "\t in:memories \n"])
def test_a_query_with_nothing_at_all_says_what_to_give(text: str) -> None:
    with pytest.raises(InvalidQuery, match="nothing to look for") as raised:
        parse_query(text)

    assert raised.value.column is None


def test_a_long_unclosed_quote_is_cut_in_the_message() -> None:
    with pytest.raises(InvalidQuery) as raised:
        parse_query('"' + "word " * 40)

    assert f"{ELLIPSIS}` at column 1" in raised.value.message
    assert len(raised.value.message) < 120


@pytest.mark.parametrize(
    "fields",
    [
        {"words": ("two words",)},
        {"words": ("Upper",)},
        {"words": ('a"b',)},
        {"words": ("",)},
        {"phrases": (("one",),)},
        {"excluded_phrases": (("a", 'b"'),)},
        {"excluded_words": ("x",)},
        {},
    ],
)
def test_a_query_built_by_hand_must_be_what_the_parser_makes(fields: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SearchQuery.model_validate(fields)


def document(name: str, description: str, body: str, type: str = "project") -> Document:
    return Document.of(
        RecordContent(name=name, type=RecordType(type), description=description, body=body)
    )


def test_matches_is_the_meaning_of_a_query() -> None:
    record = document("deploy-steps", "How we deploy", "Run make deploy on staging.")

    assert matches(parse_query("deploy staging"), record)
    assert matches(parse_query('"make deploy" type:project name:deploy*'), record)
    assert matches(parse_query("name:deploy-steps steps"), record)
    assert not matches(parse_query("deploy production"), record)
    assert not matches(parse_query('"deploy make"'), record)
    assert not matches(parse_query('"we deploy run"'), record), "a phrase stays in one field"
    assert not matches(parse_query("deploy -staging"), record)
    assert not matches(parse_query('deploy -"make deploy"'), record)
    assert not matches(parse_query("deploy type:user"), record)
    assert not matches(parse_query("name:deploy"), record)


def test_a_snippet_marks_matches_in_the_best_window_and_shows_its_cuts() -> None:
    body = " ".join(f"word{number}" for number in range(40)) + "\nmake deploy now"
    query = parse_query('"make deploy" now')

    shown = snippet(query, name="n", description="d", body=body)

    assert shown.endswith(f"{MARK_START}make deploy{MARK_END} {MARK_START}now{MARK_END}")
    assert shown.startswith(ELLIPSIS)
    assert len(shown.split()) == SNIPPET_TOKENS


def test_a_snippet_prefers_the_field_with_more_of_the_query() -> None:
    query = parse_query("deploy staging")

    shown = snippet(
        query, name="deploy-staging", description="How to deploy", body="Deploy it to staging."
    )

    assert shown == f"{MARK_START}Deploy{MARK_END} it to {MARK_START}staging{MARK_END}."


def test_a_snippet_of_a_filter_only_query_is_the_opening_of_the_body() -> None:
    query = parse_query("type:project")
    body = "First line\n\n  second   line " + "more " * 30

    shown = snippet(query, name="n", description="d", body=body)

    assert shown.startswith("First line second line more")
    assert shown.endswith(ELLIPSIS)
    assert snippet(query, name="n", description="Only this", body="") == "Only this"


def test_the_index_agrees_with_matches_on_random_queries() -> None:
    records = realistic_records(300, seed=5)
    index = SearchIndex(records)
    documents = [Document.of(record) for record in records]
    vocabulary = sorted({token for doc in documents for field in doc.fields for token in field})
    rng = random.Random(5)
    for _ in range(300):
        words = rng.sample(vocabulary, rng.randint(1, 2))
        parts = [*words]
        if rng.random() < 0.3:
            parts.append(f"-{rng.choice(vocabulary)}")
        if rng.random() < 0.3:
            parts.append(f"type:{rng.choice(list(RecordType)).value}")
        if rng.random() < 0.3:
            body = rng.choice(documents).fields[2]
            start = rng.randrange(max(1, len(body) - 2))
            parts.append('"' + " ".join(body[start : start + 3]) + '"')
        query = parse_query(" ".join(parts))

        found = [hit.name for hit in index.search(query, 1000)]

        assert sorted(found) == sorted(d.name for d in documents if matches(query, d)), query


async def test_the_service_parses_checks_the_limit_and_asks_the_storage(tmp_path: Path) -> None:
    storage = await SqliteStorage.open(tmp_path / "memory.db")
    agent = Identity(actor=Actor(kind=ActorKind.BUILDER, detail="a"), task_id="task-1")
    builder = MemoryService(storage, Identity(actor=agent.actor), FixedClock(NOON))
    try:
        for number in range(25):
            await builder.save(f"note-{number:02}", type="project", description="zebra", body="b")
        service = MemoryService(storage, agent, FixedClock(NOON))

        assert len(await service.search("zebra")) == 20, "agents search, 20 hits by default"
        assert len(await service.search("zebra", limit=200)) == 25
        assert [hit.name for hit in await service.search("zebra", limit=1)] == ["note-00"]
        for limit in (0, 201, -1):
            with pytest.raises(InvalidQuery, match="1 to 200"):
                await service.search("zebra", limit=limit)
        with pytest.raises(InvalidQuery, match="column 1"):
            await service.search('"zebra')
    finally:
        await storage.aclose()
