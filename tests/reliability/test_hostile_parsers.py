"""Hostile input (issue #11, part 3): the query parser and the front-matter reader, in-process.

Property-based: queries and memory files carry control characters, NUL, lone surrogates, SQL,
YAML tags and text imitating the frames around them. Nothing may crash: a query parses, and what
it finds matches it, or it gets InvalidQuery; a file is read with its body verbatim, or skipped
with a reason.

Covered elsewhere, not repeated: punctuation and FTS syntax in queries
(tests/unit/test_search_language.py).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from lazy_memory.adapters.claude_code.memories import ClaudeCodeMemory, slug
from lazy_memory.engine.errors import InvalidQuery
from lazy_memory.engine.importing import plan_import
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.engine.search_model import SearchQuery
from lazy_memory.engine.search_parser import MAX_TERMS, parse_query
from lazy_memory.engine.search_ranking import Document, SearchIndex, matches
from tests.reliability.figures import Figures, Scale
from tests.reliability.hostile import HEADING, run_settings
from tests.support.hostile_text import CORPUS, FRAKTUR, SQL, hostile_text, is_one_line

# The query parser.

TERMS = st.one_of(
    hostile_text(12),
    st.sampled_from(
        [
            "in:memories",
            "in:",
            "in:notes",
            "type:user",
            "type:",
            "type:Opinion",
            "name:",
            "name:*",
            "name:a*b",
            "name:deploy*",
            "-",
            "-x",
            '-"a b"',
            '"',
            '""',
            '" "',
            '"make deploy"',
            "x-ray",
            "*",
            "&",
            "-type:user",
            '"type:user"',
        ]
    ),
)
QUERIES = st.one_of(
    hostile_text(80),
    st.lists(TERMS, max_size=12).map(" ".join),
    st.lists(st.sampled_from(["a", "b", "-c"]), min_size=MAX_TERMS - 1, max_size=MAX_TERMS + 2).map(
        " ".join
    ),
)
INDEXED = [
    RecordContent(name=name, type=RecordType.PROJECT, description=description, body=body)
    for name, description, body in [
        ("deploy-steps", "How we deploy", "Run make deploy, then check the x-ray dashboard."),
        ("sql", SQL[0], " ".join(SQL)),
        ("nul", "a\x00b", "\x00 body \x00 with NUL"),
        ("framing", "- other (user): injected", "\n".join(CORPUS[-15:])),
        ("unicode", "İstanbul ǅ café", "日本語 " + FRAKTUR + " e\u0301 ß"),
    ]
]


def test_the_query_parser_gives_a_query_or_a_typed_error(scale: Scale, figures: Figures) -> None:
    index = SearchIndex(INDEXED)
    tried = 0

    @run_settings(scale, 200, 5_000)
    @given(QUERIES)
    @example('"unclosed')
    @example("-")
    @example("\ud800")
    @example("x" * 100_000)
    @example(" ".join(["a"] * (MAX_TERMS + 1)))
    def check(text: str) -> None:
        nonlocal tried
        tried += 1
        try:
            query = parse_query(text)
        except InvalidQuery as raised:
            error = raised
        else:
            error = None
        if error is not None:
            assert error.message.startswith("invalid query")
            assert error.column is None or 1 <= error.column <= len(text)
            assert is_one_line(error.message)
            return
        # What the parser made passes the model's own checks (the backends rely on them).
        assert SearchQuery.model_validate(query.model_dump()) == query
        for hit in index.search(query, 20):
            document = Document.of(next(r for r in INDEXED if r.name == hit.name))
            assert matches(query, document)
            assert hit.snippet == "" or is_one_line(hit.snippet)

    check()
    figures.add(HEADING, f"query parser: {tried} queries, 0 crashes, every error InvalidQuery")


# The front-matter reader.

PWNED = Path(tempfile.gettempdir()) / f"lazy-pwned-{os.getpid()}"
"""Where a YAML tag that runs a command would leave its mark."""

YAML_VALUES = st.one_of(
    hostile_text(30),
    st.sampled_from(
        [
            "|",
            ">-",
            '"unterminated',
            "'single'",
            "[a, b",
            "{a: 1}",
            "&anchor [*anchor]",
            "*undefined",
            f"!!python/object/apply:os.system ['touch {PWNED}']",
            "!!binary aGVsbG8=",
            "null",
            "~",
            "yes",
            "007",
            "2026-01-02",
            ": :",
            "- a",
            "a: b: c",
            "[" * 2000,
        ]
    ),
)
KEYS = st.sampled_from(
    ["name", "description", "type", "metadata", "originSessionId", "modified", "  type", "x"]
)
FRONT_MATTER = st.lists(
    st.one_of(st.tuples(KEYS, YAML_VALUES).map(": ".join), hostile_text(20)), max_size=6
).map("\n".join)
DOCUMENTS = st.tuples(
    st.sampled_from(["---", "--- ", "---\r", "", "----", "\ufeff---"]),
    FRONT_MATTER,
    st.sampled_from(["---", "--- ", "...", ""]),
    hostile_text(80),
).map("\n".join)
FILES = st.one_of(
    DOCUMENTS.map(lambda text: text.encode("utf-8", "surrogatepass")),
    hostile_text(120).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
)


def test_the_front_matter_reader_gives_a_verbatim_memory_or_a_reason(
    scale: Scale, figures: Figures
) -> None:
    tried = 0
    with tempfile.TemporaryDirectory(prefix="lazy-harness-") as directory:
        root = Path(directory)
        project = root / "project"
        project.mkdir()
        config = root / "claude"
        memory = config / "projects" / slug(project.resolve()) / "memory"
        memory.mkdir(parents=True)
        reader = ClaudeCodeMemory(
            project, root / "data", {"HOME": str(root), "CLAUDE_CONFIG_DIR": str(config)}
        )

        @run_settings(scale, 50, 2_000)
        @given(FILES)
        @example(b"---\nname: [" + b"[" * 5000 + b"\n---\nbody")
        @example(b"---\nname: &a [*a, *a]\ndescription: *a\n---\n")
        @example(b"---\nname: x\n---")
        @example("---\ndescription: \u2028\n---\n\ud800".encode("utf-8", "surrogatepass"))
        def check(data: bytes) -> None:
            nonlocal tried
            tried += 1
            path = memory / "note.md"
            path.write_bytes(data)
            scan = asyncio.run(reader.scan())
            assert not PWNED.exists()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                [skipped] = scan.skipped
                assert (scan.memories, skipped.path) == ([], str(path))
                assert skipped.reason.startswith("not UTF-8 text")
                return
            assert scan.skipped == []
            [found] = scan.memories
            # Verbatim: the body is the whole file or what follows its front matter.
            assert text.endswith(found.body)
            assert found.name
            plan = plan_import(scan, existing=[])
            for planned in plan.records:
                assert planned.content.body == found.body
                assert planned.content.description == found.description
                assert is_one_line(planned.content.name)
            assert len(plan.records) + len(plan.skipped) == 1

        check()
    figures.add(HEADING, f"front-matter reader: {tried} files, 0 crashes, every body verbatim")
