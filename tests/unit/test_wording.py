"""Counts agree with their nouns: `1 record`, `2 records`, never `1 records` or `record(s)`.

Besides the helper itself, the code that says things is read here: no string in it hedges a
plural with `(s)`, and no f-string puts a count straight before a plural noun, which would
say `1 records` one day; such a count goes through engine/wording.py's counted().
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lazy_memory.engine.wording import agreeing, counted

REPOSITORY = Path(__file__).parents[2]
SPEAKING = ("engine", "adapters", "wire", "rpc")
"""The code whose messages, pages and logs people read."""
HEDGE = re.compile(r"\w\(s\)")
PLURAL_AFTER_A_COUNT = re.compile(
    r"^ (records|names|descriptions|entries|requests|connections|revisions|hits|tokens|files|"
    r"spellings|writes|lines|bodies)\b"
)


def test_a_count_and_its_noun_agree() -> None:
    assert counted(1, "record") == "1 record"
    assert counted(0, "record") == "0 records"
    assert counted(2, "record") == "2 records"
    assert counted(1204, "entry", "entries") == "1,204 entries"
    assert counted(1, "entry", "entries") == "1 entry"
    assert (agreeing(1, "has", "have"), agreeing(3, "has", "have")) == ("has", "have")


def strings(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, literal text, what follows a count) for each string and f-string part."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value, ""))
        if isinstance(node, ast.JoinedStr):
            for part, following in zip(node.values, node.values[1:], strict=False):
                if not isinstance(part, ast.FormattedValue) or not isinstance(
                    following, ast.Constant
                ):
                    continue
                if isinstance(part.value, ast.Name) and part.value.id.isupper():
                    continue  # a constant: CONFIG_FILE names a file, MAX_SEARCH_LIMIT is never 1
                found.append((node.lineno, "", str(following.value)))
    return found


def test_no_message_hedges_a_plural_or_counts_before_a_fixed_plural() -> None:
    problems = []
    for folder in SPEAKING:
        for path in sorted((REPOSITORY / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, text, after_count in strings(tree):
                where = f"{path.relative_to(REPOSITORY)}:{line}"
                if HEDGE.search(text):
                    problems.append(f"{where}: {text!r} hedges a plural: use counted()")
                if PLURAL_AFTER_A_COUNT.match(after_count):
                    problems.append(f"{where}: a count before {after_count[:20]!r}: use counted()")

    assert problems == []
