"""Imported records stay everyone's to edit (#18 points 7 and 8), through the real `lazy`.

Real Claude Code memory files carry names with spaces, capitals, Korean and quotes, and
descriptions far over the authoring limit; each such record can be saved again, removed and
revived by its exact name, and its provenance stays in view. The preview and the hints list
names one a line, name an unknown type, and `lazy init` shows the preview once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Lazy
from tests.support.name_table import REAL_WORLD

LONG = "A description far longer than the authoring limit, the kind the hint names. " * 4


def real_world_harness(memory_dir: Path) -> dict[str, Path]:
    """One file per real-world name, each with a description over 200 characters."""
    files = {}
    for number, name in enumerate(REAL_WORLD):
        quoted = json.dumps(name, ensure_ascii=False)
        path = memory_dir / f"memory_{number}.md"
        path.write_text(f"---\nname: {quoted}\ndescription: {LONG}\ntype: project\n---\nBody\n")
        files[name] = path
    return files


def test_every_real_world_name_is_edited_removed_and_revived_by_its_exact_name(
    lazy: Lazy, memory_dir: Path
) -> None:
    files = real_world_harness(memory_dir)

    imported = lazy("doctor", "--import-memory", "--yes")

    assert imported.returncode == 0, imported.stderr
    hint = imported.stdout.split("shorten them with `lazy memory save NAME -d`:\n", 1)[1]
    assert hint.splitlines()[: len(REAL_WORLD)] == [f"  {name}" for name in sorted(REAL_WORLD)]
    for name in REAL_WORLD:
        edited = lazy("memory", "save", "-d", "Shortened by a person", "--", name)
        assert edited.stdout.startswith(f"updated {name} (project), revision 2"), edited.stderr
        shown = json.loads(lazy("memory", "show", "--json", "--", name).stdout)
        assert (shown["description"], shown["updated_by"]["kind"]) == (
            "Shortened by a person",
            "human",
        )
        # Where it came from is kept with the record through the edit.
        assert shown["provenance"]["source"] == str(files[name])
        removed = lazy("memory", "rm", "--", name)
        assert removed.returncode == 0, removed.stderr
        revived = lazy("memory", "save", "-t", "project", "-d", "Back", "--body", "b", "--", name)
        assert revived.stdout.startswith(f"revived {name} (project), revision 4"), revived.stderr
        history = lazy("memory", "history", "--", name)
        assert "Revision 1 was imported at " in history.stdout
        assert f"UTC from {files[name]}." in history.stdout


def test_the_preview_names_an_unknown_type_and_lists_names_one_a_line(
    lazy: Lazy, memory_dir: Path
) -> None:
    (memory_dir / "odd.md").write_text("---\nname: Odd, typed\ndescription: d\ntype: Gotcha\n---\n")
    (memory_dir / "kept.md").write_text("---\nname: Kept, with a comma\ndescription: d\n---\n")
    lazy("memory", "save", "Kept, with a comma", "-t", "user", "-d", "mine", "--body", "")

    preview = lazy("doctor", "--import-memory")
    doctor = lazy("doctor")

    assert "  Odd, typed (project)  from " in preview.stdout
    assert (
        "Note: Odd, typed has the type 'Gotcha', outside the four (user, feedback, project, "
        "reference); it is stored as project, its original type kept in its provenance."
    ) in preview.stdout
    assert "Already in the store, left alone (1):\n  Kept, with a comma\n" in preview.stdout
    assert "import them:\n  Odd, typed\n" in doctor.stdout


def test_provenance_stays_visible_in_history_after_edits(lazy: Lazy, memory_dir: Path) -> None:
    source = memory_dir / "notes.md"
    source.write_text("---\nname: Team notes\ndescription: d\ntype: Gotcha\n---\nBody\n")
    lazy("doctor", "--import-memory", "--yes")
    lazy("memory", "save", "-d", "edited once", "--", "Team notes")
    lazy("memory", "save", "--body", "edited twice", "--", "Team notes")

    history = lazy("memory", "history", "--", "Team notes")
    entries = json.loads(lazy("memory", "history", "--json", "--", "Team notes").stdout)

    assert [entry["revision"] for entry in entries] == [1, 2, 3]
    assert all(entry["provenance"]["source"] == str(source) for entry in entries)
    imported_at = entries[0]["at"][:19].replace("T", " ")
    assert (
        f"Revision 1 was imported at {imported_at} UTC from {source}, typed 'Gotcha' in the file."
    ) in history.stdout


def test_init_in_a_terminal_prints_the_preview_once(project: Path, memory_dir: Path) -> None:
    (memory_dir / "a.md").write_text("---\nname: Only once\ndescription: d\n---\n")

    answered = subprocess.run(
        ["script", "-qec", f"{sys.executable} -m lazy_memory.rpc.cli init", "/dev/null"],
        cwd=project,
        input="y\n",
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert "Imported 1 record," in answered.stdout, answered.stdout
    assert answered.stdout.count("To import (1):") == 1
    assert answered.stdout.count("Harness memory found in:") == 1
