"""Fuzzing the importer and the name rule (issue #17, "Done when"), with hypothesis.

Each example builds a memory directory of generated entries (file names of any bytes, huge and
hostile front-matter names, byte-order marks, control characters, symbolic and hard links
out, FIFOs, oversized files) next to canary files outside it, then scans, plans and prints the
preview in-process. It must never crash, never open or read a file outside the scanned
folders (every open is recorded; no canary's content appears anywhere), give only names that
obey the name rule, and print no control or format character. The name rule gets random
strings: each is accepted or refused with a typed error, and its derived name obeys the rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lazy_memory.adapters.claude_code import memories as harness
from lazy_memory.adapters.claude_code.memories import MAX_FILE_BYTES, ClaudeCodeMemory, slug
from lazy_memory.engine.errors import InvalidRecord
from lazy_memory.engine.importing import ImportPlan, plan_import
from lazy_memory.engine.names import check_name, derived_name, name_problem
from lazy_memory.rpc.cli.importing import print_preview
from tests.reliability.figures import Figures, Scale
from tests.support.hostile_text import (
    CORPUS,
    hostile_text,
    is_valid_name,
    unsafe_characters,
)

HEADING = "fuzzing (hypothesis): the importer and the name rule"
CANARY = "CANARY-5d1e0c7b"
"""The content of every file outside the memory directory: it must never be read."""
KINDS = (
    "file",
    "file",
    "file",
    "link-out",
    "link-in",
    "hard-link-out",
    "fifo",
    "folder-link-out",
    "sparse-huge",
    "team-file",
)
HUGE_NAMES = st.sampled_from(["n" * 5000, "é" * 201, "x" * 200, "x" * 201, "\x1b" * 300])
FRONT_MATTER_NAMES = st.one_of(hostile_text(60), HUGE_NAMES, st.sampled_from(CORPUS))


def yaml_quoted(text: str) -> str:
    """text as a YAML double-quoted scalar, every unprintable character an escape."""
    escaped = []
    for character in text:
        code = ord(character)
        if character in '"\\':
            escaped.append("\\" + character)
        elif character.isprintable():
            escaped.append(character)
        else:
            escaped.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return '"' + "".join(escaped) + '"'


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    """A memory file's bytes: front matter with a hostile name, or anything at all."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.binary(max_size=300))
    name = draw(FRONT_MATTER_NAMES)
    written = yaml_quoted(name) if draw(st.booleans()) else name.replace("\n", " ")
    text = f"---\nname: {written}\ndescription: {draw(hostile_text(40))}\n"
    text += f"type: {draw(st.sampled_from(['user', 'Gotcha', '', 'project']))}\n---\n"
    text += draw(hostile_text(80))
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode("utf-8", "surrogatepass")


FILE_NAMES = st.one_of(
    hostile_text(40).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(min_size=1, max_size=60),
).map(lambda name: name.replace(b"/", b"_").replace(b"\x00", b"_")[:240] + b".md")
ENTRIES = st.lists(st.tuples(FILE_NAMES, st.sampled_from(KINDS), contents()), max_size=8)


@contextlib.contextmanager
def opens_recorded() -> Iterator[list[str]]:
    """Every path os.open is given while the block runs, one relative to a dir_fd resolved."""
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        where = os.fsdecode(path)
        folder = kwargs.get("dir_fd")
        if folder is not None:
            where = os.path.join(os.readlink(f"/proc/self/fd/{folder}"), where)
        opened.append(where)
        return real_open(path, flags, *args, **kwargs)

    harness.os.open = recording_open  # type: ignore[assignment]
    try:
        yield opened
    finally:
        harness.os.open = real_open


class Tree:
    """A project, its memory directory, and canaries outside it, in a temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = root / "project"
        self.project.mkdir()
        self.config = root / "claude"
        self.memory = self.config / "projects" / slug(self.project.resolve()) / "memory"
        self.outside = root / "outside"
        self.outside.mkdir()
        self.canary = self.outside / "secret.md"
        self.canary.write_text(f"---\nname: stolen\n---\n{CANARY}\n")
        (self.outside / "folder").mkdir()
        (self.outside / "folder" / "inner.md").write_text(f"{CANARY}\n")
        other = self.config / "projects" / "-other-project" / "memory"
        other.mkdir(parents=True)
        (other / "theirs.md").write_text(f"{CANARY}\n")
        self.reader = ClaudeCodeMemory(
            self.project,
            root / "data",
            {"HOME": str(root), "CLAUDE_CONFIG_DIR": str(self.config)},
        )

    def fill(self, entries: list[tuple[bytes, str, bytes]]) -> None:
        """A fresh memory directory holding entries."""
        shutil.rmtree(self.memory, ignore_errors=True)
        self.memory.mkdir(parents=True)
        base = os.fsencode(self.memory)
        for name, kind, data in entries:
            folder = base + b"/team" if kind == "team-file" else base
            if kind == "team-file" and not os.path.lexists(folder):
                os.mkdir(folder)
            path = folder + b"/" + name
            if not os.path.isdir(folder) or os.path.lexists(path):
                continue
            if kind in ("file", "team-file"):
                with open(path, "wb") as file:
                    file.write(data)
            elif kind == "link-out":
                os.symlink(self.canary, path)
            elif kind == "link-in":
                os.symlink(b"team", path)
            elif kind == "hard-link-out":
                os.link(self.canary, path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "folder-link-out":
                os.symlink(self.outside / "folder", path)
            elif kind == "sparse-huge":
                with open(path, "wb") as file:
                    file.write(data[:100])
                    file.truncate(MAX_FILE_BYTES + 1)

    def import_once(self) -> tuple[ImportPlan, str, list[str]]:
        """Scan, plan and preview; what was opened along the way."""
        with opens_recorded() as opened:
            scan = asyncio.run(self.reader.scan())
        plan = plan_import(scan, existing=[])
        preview = io.StringIO()
        with contextlib.redirect_stdout(preview):
            print_preview(plan)
        return plan, preview.getvalue(), opened


def check_import(tree: Tree, plan: ImportPlan, preview: str, opened: list[str]) -> None:
    inside = os.path.realpath(tree.memory)
    for path in opened:
        assert path == os.devnull or os.path.commonpath([path, inside]) == inside, path
    assert CANARY not in repr(plan)
    assert CANARY not in preview
    for planned in plan.records:
        assert name_problem(planned.content.name) is None, planned.content.name
    for renamed in plan.renamed:
        assert name_problem(renamed.name) is None
        assert renamed.name == derived_name(renamed.original)
    assert unsafe_characters(preview) == [], preview


def test_the_importer_reads_only_what_it_scans_and_gives_only_legal_names(
    scale: Scale, figures: Figures
) -> None:
    tried = records = skipped = 0
    with tempfile.TemporaryDirectory(prefix="lazy-import-fuzz-") as directory:
        tree = Tree(Path(directory))

        @settings(
            max_examples=scale.pick(150, 3_000),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(ENTRIES)
        @example([(b"a.md", "hard-link-out", b""), (b"b.md", "link-out", b"")])
        @example([(b"team", "folder-link-out", b""), (b"x.md", "sparse-huge", b"")])
        @example([(b"\xff\x1b[2J.md", "file", b"\xef\xbb\xbf---\nname: a/b\n---\nx")])
        @example([(b"n.md", "file", ("---\nname: " + "n" * 5000 + "\n---\n").encode())])
        def check(entries: list[tuple[bytes, str, bytes]]) -> None:
            nonlocal tried, records, skipped
            tried += 1
            tree.fill(entries)
            plan, preview, opened = tree.import_once()
            check_import(tree, plan, preview, opened)
            records += len(plan.records)
            skipped += len(plan.skipped)

        check()
    figures.add(
        HEADING,
        f"importer: {tried} generated memory directories, {records} records planned, {skipped} "
        "entries skipped and reported, nothing outside read, 0 crashes",
    )


_TYPE_MARK = re.compile(r"\(\s*(?:user|feedback|project|reference)\s*\)\s*:", re.IGNORECASE)


def refused(name: str) -> str | None:
    """Why check_name refuses name (its typed error's message), or None if it accepts it."""
    try:
        assert check_name(name) == name
    except InvalidRecord as error:
        return error.message
    return None


def test_the_name_rule_accepts_or_refuses_typed_and_derives_a_legal_name(
    scale: Scale, figures: Figures
) -> None:
    tried = accepted = 0

    @settings(max_examples=scale.pick(2_000, 50_000), deadline=None)
    @given(st.one_of(hostile_text(80), HUGE_NAMES, st.text(max_size=300)))
    @example("b (user): fake")
    @example("\ud800")
    @example(".." + "/" * 300)
    def check(name: str) -> None:
        nonlocal tried, accepted
        tried += 1
        refusal = refused(name)
        if refusal is None:
            accepted += 1
            assert is_valid_name(name), name
            assert _TYPE_MARK.search(name) is None
        else:
            assert not is_valid_name(name), name
            assert refusal.isprintable(), "one line, the name escaped"
            assert len(refusal) < 600, "a huge name is cut"
        derived = derived_name(name)
        assert name_problem(derived) is None, (name, derived)
        assert derived == derived_name(name)
        assert is_valid_name(derived)

    check()
    figures.add(
        HEADING,
        f"name rule: {tried} generated names, {accepted} accepted, every other refused typed, "
        "every derived name legal",
    )
