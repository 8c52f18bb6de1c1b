"""Hostile input (issue #11, part 3): hostile records through the engine, on every backend.

Names, descriptions and bodies carry control characters, NUL, lone surrogates, SQL, and text
imitating the frames around them; a real `lazy engine` on a fresh store of each backend is asked
to save them. Each save is refused with a typed error, or is stored and comes back byte-identical
and found by search, on sqlite, files and postgres alike; so does a 5 MB body a project allows.

Covered elsewhere, not repeated: the authoring rules one by one (tests/unit/test_records.py),
what every output shows of hostile text (test_hostile_output.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lazy_memory.engine.search_model import tokenize
from lazy_memory.wire.framing import MAX_MESSAGE_BYTES
from tests.reliability.figures import Figures, Scale
from tests.reliability.hostile import (
    HEADING,
    process_environment,
    run_settings,
)
from tests.reliability.live_engine import LiveEngine, frame_bytes
from tests.support.hostile_text import (
    CORPUS,
    SQL,
    TYPES,
    hostile_text,
    is_one_search_term,
    one_line,
    storable_text,
    valid_names,
    valid_save,
)
from tests.support.stores import BACKENDS, backend_environment

STORE_CODES = frozenset({-32011, -32602})
"""What a save that breaks a rule gets: InvalidRecord, or invalid params."""


# Hostile records, through the engine, on every backend.


@pytest.fixture(scope="module", params=BACKENDS)
def backend_engine(request: pytest.FixtureRequest, workspace: Path) -> Iterator[LiveEngine]:
    """A builder's engine on a fresh store of each backend."""
    backend: str = request.param
    live = LiveEngine(
        process_environment(
            workspace,
            workspace / f"{backend}-data",
            LAZY_ACTOR="fuzzer",
            **backend_environment(backend, request),
        ),
        workspace / f"{backend}-engine.log",
        cwd=workspace / "project",
    )
    yield live
    live.close()


BODIES = st.one_of(storable_text(300), st.sampled_from(CORPUS))
_ASCII_SEPARATOR = r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"
ASCII_WORD = re.compile(rf"(?:(?<={_ASCII_SEPARATOR})|^)[A-Za-z0-9]+(?={_ASCII_SEPARATOR}|$)")
# Mostly saves the rules accept (hostile where a record may be), some that break a rule.
SAVES = st.one_of(
    st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), BODIES),
    st.tuples(valid_names(), st.sampled_from(TYPES), one_line(), BODIES),
    st.tuples(
        st.one_of(valid_names(), hostile_text(20)),
        st.one_of(st.sampled_from(TYPES), hostile_text(10)),
        st.one_of(one_line(), hostile_text(220)),
        st.one_of(BODIES, hostile_text(300)),
    ),
)


def test_hostile_records_come_back_byte_identical_or_are_refused_typed(
    backend_engine: LiveEngine, scale: Scale, figures: Figures
) -> None:
    tried = accepted = 0
    engine = backend_engine

    @run_settings(scale, 30, 500)
    @given(SAVES)
    @example(("drop", "user", SQL[0], "\n".join(SQL)))
    @example(("nul", "project", "a\x00b", "\x00" * 3 + "body\x00"))
    @example(("framing", "feedback", "- other (user): x", "\n".join(CORPUS)))
    @example(("surrogate", "user", "d", "\ud800"))
    @example(("control", "reference", "\x1b[31m\x7f\ufeff\u202e", "\r\n\v\f\x1c\x85\u2028"))
    def check(save: tuple[str, str, str, str]) -> None:
        nonlocal tried, accepted
        tried += 1
        # As the engine reads them: JSON joins an escaped surrogate pair into one character.
        name, type, description, body = json.loads(json.dumps(save))
        params = {"name": name, "type": type, "description": description, "body": body}
        answer = engine.request("lazy/memory/save", params)
        if not valid_save(name, type, description, body):
            assert answer["error"]["code"] in STORE_CODES, answer
            return
        assert "result" in answer, answer
        # A save equal to the live revision writes nothing (and says so).
        accepted += not answer["result"].get("unchanged", False)
        record = engine.request("lazy/memory/recall", {"name": name})["result"]["record"]
        assert {field: record[field] for field in params} == params
        if not is_one_search_term(name):
            return  # a name with a space or a quote is not one `name:` term of a query
        [hit] = engine.request("lazy/search", {"query": f"name:{name}"})["result"]["hits"]
        assert (hit["name"], hit["description"]) == (name, description)
        # An ASCII word between ASCII separators: around other characters SQLite's tokenizer
        # draws token boundaries and folds case a little differently from the engine's
        # (test_every_backend_finds_what_the_tokenizer_finds).
        word = ASCII_WORD.search(body)
        if word is not None:
            found = engine.request("lazy/search", {"query": f"name:{name} {word[0]}"})
            assert [hit["name"] for hit in found["result"]["hits"]] == [name]

    check()
    entries = engine.request("lazy/memory/history")["result"]["entries"]
    assert len(entries) == accepted, "a refused save wrote something"
    assert engine.alive()
    backend = engine.log.name.removesuffix("-engine.log")
    figures.add(
        HEADING,
        f"{backend}: {tried} hostile saves through the engine, {accepted} stored and read back "
        "byte-identical, the rest refused with a typed error",
    )


def test_a_5_mb_body_is_refused_by_default_and_comes_back_byte_identical_when_allowed(
    backend_engine: LiveEngine, scale: Scale, request: pytest.FixtureRequest, workspace: Path
) -> None:
    backend = request.node.callspec.params["backend_engine"]
    if backend != "sqlite" and not scale.full:
        pytest.skip("the fast run sends 5 MB to sqlite only; the full run to every backend")
    piece = "".join(CORPUS[:20]).replace("\ud800", "").encode("utf-8", "ignore").decode()
    body = (piece * (5 * 1024 * 1024 // len(piece.encode())))[: 5 * 1024 * 1024]
    params = {"name": "five-mb", "type": "project", "description": "big", "body": body}
    assert len(frame_bytes({"params": params})) < MAX_MESSAGE_BYTES

    refused = backend_engine.request("lazy/memory/save", params)
    assert refused["error"]["code"] == -32011, refused
    assert "the limit is 65,536 bytes" in refused["error"]["message"]

    # A project that raises [memory] max_body_bytes stores it, and gives it back whole.
    project = workspace / f"{backend}-big-bodies"
    (project / ".git").mkdir(parents=True)
    (project / "lazy.toml").write_text(f"[memory]\nmax_body_bytes = {6 * 1024 * 1024}\n")
    environment = process_environment(
        workspace,
        workspace / f"{backend}-big-data",
        LAZY_ACTOR="fuzzer",
        **backend_environment(backend, request),
    )
    engine = LiveEngine(environment, workspace / f"{backend}-big-engine.log", cwd=project)
    try:
        saved = engine.request("lazy/memory/save", params)
        assert "result" in saved, saved
        recalled = engine.request("lazy/memory/recall", {"name": "five-mb"})
        assert recalled["result"]["record"]["body"] == body
    finally:
        engine.close()
    assert backend_engine.serving()


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param(
            "sqlite",
            marks=pytest.mark.xfail(
                strict=True,
                reason="SQLite's unicode61 tokenizer folds İ (U+0130) and Cherokee letters "
                "otherwise than str.lower(), and takes unassigned code points for letters: such "
                "words are not found on sqlite alone",
            ),
        ),
        "files",
        "postgres",
    ],
)
async def test_every_backend_finds_what_the_tokenizer_finds(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from lazy_memory.adapters.clock import SystemClock
    from lazy_memory.engine.identity import Identity
    from lazy_memory.engine.records import Actor, ActorKind
    from lazy_memory.engine.service import MemoryService
    from tests.support.stores import open_store

    storage = await open_store(backend, tmp_path, request)
    try:
        service = MemoryService(
            storage, Identity(actor=Actor(kind=ActorKind.BUILDER, detail="b")), SystemClock()
        )
        words = ["İstanbul", "Ꭰꭰ", "straße", "ǅemal", "Ωmega", "00\U00018cd6"]
        for number, word in enumerate(words):
            await service.save(f"word-{number}", type="user", description="d", body=word)
        missed = [
            word
            for number, word in enumerate(words)
            for token in tokenize(word)
            if [hit.name for hit in await service.search(f"{token} name:word-{number}")]
            != [f"word-{number}"]
        ]
    finally:
        await storage.aclose()
    assert missed == []
