"""The record rules: names, types and descriptions on the authoring and import paths."""

from __future__ import annotations

import pytest

from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.engine.index import collapse_whitespace
from lazy_memory.engine.names import check_name
from lazy_memory.engine.records import (
    RecordType,
    authored_content,
    imported_content,
    parse_type,
)


@pytest.mark.parametrize(
    "name", ["a", "0", "deploy-steps", "v1.2_notes", "A", "-a", "_a", "a b", "ä", "x" * 200]
)
def test_valid_names(name: str) -> None:
    assert check_name(name) == name


# The whole table, through every entry path, is in test_name_rule.py and
# tests/e2e/test_names_every_way_in.py.
@pytest.mark.parametrize("name", ["", ".a", "a/b", "x" * 201, "a\n", "a\x00", " a", "a (user): b"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidRecord, match="invalid name"):
        check_name(name)


def test_the_four_types() -> None:
    assert [parse_type(t) for t in ("user", "feedback", "project", "reference")] == list(RecordType)
    with pytest.raises(InvalidRecord, match="use one of user, feedback, project, reference"):
        parse_type("Project")


@pytest.mark.parametrize(
    ("description", "problem"),
    [
        ("", "empty"),
        (" \t ", "empty"),
        ("x" * 201, "201 characters; the limit is 200"),
        ("one\ntwo", "one line"),
        ("one\rtwo", "one line"),
        ("one\u2028two", "one line"),
    ],
)
def test_authored_descriptions_are_one_line_of_at_most_200(description: str, problem: str) -> None:
    with pytest.raises(InvalidRecord, match=problem):
        authored_content("n", "user", description, "body")


def test_200_characters_are_counted_as_characters_not_bytes() -> None:
    content = authored_content("n", "user", "記" * 200, "")
    assert len(content.description.encode()) == 600


def test_imports_keep_long_descriptions_and_any_name() -> None:
    content = imported_content("My Note (old)", RecordType.PROJECT, "y" * 1000 + "\nmore", "b")
    assert content.description == "y" * 1000 + "\nmore"
    assert content.name == "My Note (old)"
    with pytest.raises(InvalidRecord):
        imported_content("", RecordType.PROJECT, "d", "b")


def test_text_that_is_not_utf8_is_refused() -> None:
    undecodable = b"caf\xe9".decode("utf-8", "surrogateescape")
    with pytest.raises(InvalidRecord, match="body is not valid UTF-8"):
        authored_content("n", "user", "d", undecodable)
    with pytest.raises(InvalidRecord, match="description is not valid UTF-8"):
        imported_content("n", RecordType.USER, undecodable, "")


def test_index_whitespace_collapses_line_breaks_and_runs() -> None:
    assert collapse_whitespace("  a\tb\n\nc   d ") == "a b c d"
