"""Finding record references in text: the core of hover, completion, hints and diagnostics."""

from __future__ import annotations

from datetime import UTC, datetime

from lazy_memory.engine.records import Record, RecordType
from lazy_memory.engine.references import (
    Completion,
    Form,
    Problem,
    Reference,
    completion_at,
    document_uri,
    name_in_uri,
    problem_message,
    problem_with,
    record_markdown,
    reference_at,
    references_in,
)
from tests.support.actors import BUILDER


def names(text: str) -> list[tuple[str, Form, int, int]]:
    return [
        (ref.name, ref.form, ref.line, ref.name_start) for ref in references_in(text.split("\n"))
    ]


def test_both_written_forms_are_found_in_reading_order() -> None:
    text = "see memory:deploy-steps and [[oncall]]\n[[ spaced name ]] memory:x"
    assert names(text) == [
        ("deploy-steps", Form.MEMORY, 0, 11),
        ("oncall", Form.WIKI, 0, 30),
        ("spaced name", Form.WIKI, 1, 2),
        ("x", Form.MEMORY, 1, 25),
    ]


def test_a_sentence_ending_after_a_reference_does_not_join_the_name() -> None:
    (reference,) = references_in(["Read memory:db.migrations."])
    assert reference.name == "db.migrations"
    assert (reference.start, reference.end) == (5, 25)


def test_wiki_references_take_imported_names_but_never_span_lines_or_nest() -> None:
    assert names("[[Name With Caps & more]]") == [("Name With Caps & more", Form.WIKI, 0, 2)]
    assert names("[[open\nclose]]") == []
    assert names("[[a [[b]]") == [("b", Form.WIKI, 0, 6)]


def test_the_reference_under_the_cursor_includes_both_ends() -> None:
    lines = ["x memory:deploy y"]
    assert reference_at(lines, 0, 2, lambda name: False) is not None
    assert reference_at(lines, 0, 15, lambda name: False) is not None
    assert reference_at(lines, 0, 16, lambda name: False) is None


def test_a_bare_word_is_a_reference_only_when_a_live_record_has_that_name() -> None:
    lines = ["ask deploy-steps first"]
    found = reference_at(lines, 0, 6, {"deploy-steps"}.__contains__)
    assert found == Reference("deploy-steps", Form.BARE, 0, 4, 16, 4, 16)
    assert reference_at(lines, 0, 1, {"deploy-steps"}.__contains__) is None
    assert reference_at(lines, 0, 6, set[str]().__contains__) is None
    assert reference_at(lines, 5, 0, {"deploy-steps"}.__contains__) is None


def test_completion_follows_memory_prefix_and_wiki_opening_only() -> None:
    assert completion_at("see memory:dep", 14) == Completion(Form.MEMORY, "dep", 11, close=False)
    assert completion_at("see memory:", 11) == Completion(Form.MEMORY, "", 11, close=False)
    assert completion_at("[[de", 4) == Completion(Form.WIKI, "de", 2, close=True)
    assert completion_at("[[de]]", 4) == Completion(Form.WIKI, "de", 2, close=False)
    assert completion_at("plain dep", 9) is None
    assert completion_at("memory: dep", 11) is None


def test_problems_tell_removed_records_from_names_never_written() -> None:
    (reference,) = references_in(["[[gone]]"])
    assert problem_with(reference, {"gone"}.__contains__, ever_written=True) is None
    assert problem_with(reference, set[str]().__contains__, ever_written=True) is Problem.REMOVED
    assert problem_with(reference, set[str]().__contains__, ever_written=False) is Problem.UNKNOWN
    assert problem_message(reference, Problem.REMOVED) == "memory record gone was removed"
    assert problem_message(reference, Problem.UNKNOWN) == "no memory record named gone"


def test_document_uris_round_trip_any_name() -> None:
    for name in ("deploy-steps", "Name With Spaces/and:colons", "ünïcode"):
        assert name_in_uri(document_uri(name)) == name
    assert name_in_uri("lazy-memory:/deploy") == "deploy"
    assert name_in_uri("file:///tmp/x.md") is None
    assert name_in_uri("lazy-memory:") is None


def test_record_markdown_shows_every_fact_and_the_body() -> None:
    record = Record(
        name="deploy-steps",
        type=RecordType.PROJECT,
        description="How we deploy",
        body="1. make\n2. ship",
        revision=3,
        updated_at=datetime(2026, 11, 30, 9, 5, tzinfo=UTC),
        updated_by=BUILDER,
    )
    assert record_markdown(record) == (
        "**deploy-steps** · project · revision 3 · last written by builder builder-7, "
        "2026-11-30 09:05 UTC\n\n_How we deploy_\n\n---\n\n1. make\n2. ship\n"
    )
