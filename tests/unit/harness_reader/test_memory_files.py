"""The Claude Code memory reader on one memory file: its front matter, as written or beyond
rescue, its description and body, a file that is not text, and what the planner keeps."""

from __future__ import annotations

import os
from pathlib import Path

from lazy_memory.engine.importing import plan_import
from lazy_memory.engine.records import RecordType
from tests.unit.harness_reader.tree import by_name, scan, write


async def test_reads_the_three_layouts(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "top.md",
        "---\nname: top-level\ndescription: Fields at the top\ntype: feedback\n"
        "originSessionId: s-1\nmodified: 2026-01-02T03:04:05Z\n---\nThe body.\n",
    )
    write(
        memory / "nested.md",
        "---\nname: nested\ndescription: Fields under metadata\nmetadata:\n  type: user\n"
        "  originSessionId: s-2\n  modified: 2026-02-03\n---\n\nBody after a blank line.\n",
    )
    write(memory / "plain.md", "\n# A heading first\n\nThen text.\n")

    found = by_name(await scan(project, data_dir, home))

    assert set(found) == {"top-level", "nested", "plain"}
    top = found["top-level"]
    assert (top.description, top.type, top.body) == ("Fields at the top", "feedback", "The body.\n")
    assert (top.session_id, top.modified) == ("s-1", "2026-01-02T03:04:05Z")
    assert top.path == str(memory / "top.md")
    assert top.mtime == os.stat(memory / "top.md").st_mtime
    nested = found["nested"]
    assert (nested.type, nested.session_id, nested.modified) == ("user", "s-2", "2026-02-03")
    assert nested.body == "\nBody after a blank line.\n"
    plain = found["plain"]
    assert (plain.description, plain.type) == ("A heading first", None)
    assert plain.body == "\n# A heading first\n\nThen text.\n"


async def test_top_level_fields_win_and_values_stay_as_written(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "file-name.md",
        "---\ntype: project\nmodified: 2026-02-30\nmetadata:\n  type: user\n"
        "  originSessionId: 0012\n---\n\n## First line\n",
    )

    [memory_file] = (await scan(project, data_dir, home)).memories

    assert (memory_file.name, memory_file.description) == ("file-name", "First line")
    assert (memory_file.type, memory_file.modified) == ("project", "2026-02-30")
    assert memory_file.session_id == "0012"


async def test_a_description_with_a_colon_is_rescued_by_quoting(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    write(
        memory / "colon.md",
        '---\nname: colon\ndescription: Note: use "X" \\ not Y\ntype: "reference"\n---\nBody\n',
    )

    found = await scan(project, data_dir, home)

    [memory_file] = found.memories
    assert memory_file.description == 'Note: use "X" \\ not Y'
    assert (memory_file.type, memory_file.body) == ("reference", "Body\n")
    assert found.notes == []


async def test_front_matter_beyond_rescue_is_read_as_body_and_noted(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    text = "---\nname: broken\ndescription: fine\n  tags: [unclosed\n---\nThe real first line\n"
    write(memory / "broken.md", text)
    write(memory / "listed.md", "---\n- a list\n---\nBody\n")

    found = await scan(project, data_dir, home)

    memories = by_name(found)
    assert (memories["broken"].body, memories["broken"].type) == (text, None)
    assert memories["broken"].description == "The real first line"
    assert memories["listed"].body == "---\n- a list\n---\nBody\n"
    assert {note.path for note in found.notes} == {
        str(memory / "broken.md"),
        str(memory / "listed.md"),
    }
    for note in found.notes:
        assert note.reason.startswith("unparseable front matter (")
        assert note.reason.endswith("); read as a file without front matter")
    assert found.skipped == []


async def test_a_long_description_is_kept_verbatim(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    description = "word " * 89 + "last!"
    assert len(description) == 450
    write(memory / "long.md", f"---\nname: long\ndescription: {description}\n---\nBody\n")

    [memory_file] = (await scan(project, data_dir, home)).memories

    assert memory_file.description == description


async def test_an_undecodable_file_is_skipped_with_its_reason(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    (memory / "binary.md").write_bytes(b"\xff\xfe not text")

    found = await scan(project, data_dir, home)

    assert found.memories == []
    [skipped] = found.skipped
    assert skipped.path == str(memory / "binary.md")
    assert skipped.reason.startswith("not UTF-8 text")


async def test_the_planner_keeps_what_the_reader_found(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    description = "x" * 450
    write(
        memory / "imported.md",
        f"---\nname: imported\ndescription: {description}\nmetadata:\n  type: Gotcha\n"
        "  originSessionId: session-7\n  modified: 2026-03-04T05:06:07Z\n---\nBody *as is*\n",
    )
    write(memory / "present.md", "Already in the store\n")

    plan = plan_import(await scan(project, data_dir, home), existing=["present"])

    [planned] = plan.records
    content = planned.content
    assert (content.name, content.type, content.description) == (
        "imported",
        RecordType.PROJECT,
        description,
    )
    assert content.body == "Body *as is*\n"
    assert content.provenance is not None
    assert content.provenance.source == str(memory / "imported.md")
    assert content.provenance.session_id == "session-7"
    assert content.provenance.modified == "2026-03-04T05:06:07Z"
    assert content.provenance.original_type == "Gotcha"
    assert (plan.already_present, plan.retyped, plan.long_descriptions) == (
        ["present"],
        ["imported"],
        ["imported"],
    )
    assert plan.directories == [str(memory)]


async def test_the_planner_compares_names_as_the_store_does(
    project: Path, data_dir: Path, home: Path, memory: Path
) -> None:
    # Two files naming one record in two Unicode forms (a decomposed name is what a file
    # name from macOS gives): one record, the newer file's; a file naming a held record in
    # another form is that record, already present.
    write(memory / "old.md", "---\nname: cafe\u0301 notes\ndescription: older\n---\nold\n")
    write(memory / "new.md", "---\nname: caf\u00e9 notes\ndescription: newer\n---\nnew\n")
    os.utime(memory / "old.md", (1_000_000, 1_000_000))
    write(memory / "kelvin.md", "---\nname: \u212aelvin\ndescription: d\n---\nb\n")

    plan = plan_import(await scan(project, data_dir, home), existing=["Kelvin"])

    [planned] = plan.records
    assert (planned.content.name, planned.content.description) == ("caf\u00e9 notes", "newer")
    assert [skipped.path for skipped in plan.superseded] == [str(memory / "old.md")]
    assert plan.already_present == ["Kelvin"]
