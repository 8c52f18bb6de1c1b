"""The README and the documents beside it: their links land, and the README reads in order.

A newcomer reads what it is, the quick start, the record commands and Claude Code first, with
a table of contents above; every link between the documents reaches a file and a heading that
exist; and the test subsets it names select what they say (issue #30, point 9).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support import documents
from tests.support.components import MARKERS

DOCUMENTS = sorted(
    {
        documents.README,
        *documents.REPOSITORY.glob("*/README.md"),
        *documents.REPOSITORY.glob("docs/*.md"),
        *documents.REPOSITORY.glob("editors/*/README.md"),
    }
)
README_TEXT = documents.README.read_text(encoding="utf-8")


def _relative(path: Path) -> str:
    return path.relative_to(documents.REPOSITORY).as_posix()


@pytest.mark.parametrize("document", DOCUMENTS, ids=_relative)
def test_every_link_reaches_a_file_and_a_heading_that_exist(document: Path) -> None:
    broken = []
    for target in documents.links(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # another site, or mail: not this repository's to keep
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and linked.suffix == ".md":
            text = linked.read_text(encoding="utf-8")
            if anchor not in {heading.anchor for heading in documents.headings(text)}:
                broken.append(f"{target}: no heading with that anchor in {_relative(linked)}")
    assert broken == []


def test_the_readme_opens_with_a_newcomer_s_order() -> None:
    sections = [h.text for h in documents.headings(README_TEXT) if h.level == 2]

    assert sections[:4] == [
        "Contents",
        "Quick start",
        "The record commands",
        "Claude Code: one command, and every launch sees the whole index",
    ]


def test_the_contents_list_every_section_in_order_and_nothing_else() -> None:
    listed = documents.links(documents.section(README_TEXT, "Contents"))
    sections = [
        f"#{heading.anchor}"
        for heading in documents.headings(README_TEXT)
        if heading.level in (2, 3) and heading.text != "Contents"
    ]

    assert listed == sections


def _subset_commands() -> dict[str, str]:
    """Each test subset the README names: its `-m` expression, by the command's first words."""
    tests = documents.section(README_TEXT, "Running the tests")
    commands = re.findall(r"`(python -m pytest -m [^`]+)`", tests)
    return {shlex.split(command)[-1]: command for command in commands}


def test_the_subset_that_needs_no_component_leaves_out_every_component_marker() -> None:
    wanted = " and ".join(f"not {marker}" for marker in MARKERS)

    assert wanted in _subset_commands()


def test_each_component_has_a_subset_of_its_own() -> None:
    assert set(MARKERS) <= set(_subset_commands())


def test_every_subset_selects_by_registered_markers_only() -> None:
    text = (documents.REPOSITORY / "pyproject.toml").read_text(encoding="utf-8")
    registered = set(re.findall(r'^\s*"([a-z_]+): ', text, re.MULTILINE))

    for expression in _subset_commands():
        words = set(expression.replace("(", " ").replace(")", " ").split())
        assert words - {"not", "and", "or"} <= registered, expression
