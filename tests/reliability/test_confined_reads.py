"""The store's boundaries (issue #11, part 4; tests/reliability/boundaries.py): what is read.
The importer reads nothing outside the directories it scans, whatever links point where, and
an editor request reads no document the client never opened.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.reliability.boundary_scene import Scene, lazy
from tests.reliability.write_paths import connect
from tests.support.daemon import add_token, running_daemon

SENTINEL = "SENTINEL-outside-7f3a91"
"""Content that lives only outside the scanned directories: it must never reach the store."""


# The importer reads nothing outside the directories it scans.


def test_the_importer_never_brings_in_anything_from_outside(
    scene: Scene, tmp_path: Path, isolated_environment: Path
) -> None:
    outside = scene.outside
    secret = outside / "secret.md"
    secret.write_text(f"---\nname: stolen\ndescription: {SENTINEL}\n---\n{SENTINEL}\n")
    (outside / "folder").mkdir()
    (outside / "folder" / "inner.md").write_text(f"{SENTINEL}\n")
    memory = scene.memory
    (memory / "leak.md").symlink_to(secret)
    (memory / "relative.md").symlink_to(Path("..") / ".." / ".." / ".." / "outside" / "secret.md")
    assert (memory / "relative.md").resolve() == secret
    (memory / "hop.md").symlink_to(secret)
    (memory / "team").mkdir()
    (memory / "team" / "chain.md").symlink_to(memory / "hop.md")
    (memory / "team" / "escape").symlink_to(outside / "folder", target_is_directory=True)
    (memory / "team" / "dotdot").symlink_to(
        Path("..") / ".." / ".." / "..", target_is_directory=True
    )
    (memory / "folder.md").symlink_to(outside / "folder", target_is_directory=True)
    (memory / "loop.md").symlink_to(memory / "loop.md")
    (memory / "inside.md").write_text("---\nname: inside\ndescription: kept\n---\nInside\n")
    other = memory.parent.parent / "-some-other-project" / "memory"
    other.mkdir(parents=True)
    (other / "theirs.md").write_text(f"{SENTINEL}\n")
    overlay = isolated_environment / "builder-projects" / "b1" / memory.parent.name
    overlay.mkdir(parents=True)
    (overlay / "memory").symlink_to(outside / "folder", target_is_directory=True)
    linked_config = tmp_path / "linked-config"
    linked_config.symlink_to(memory.parent.parent.parent, target_is_directory=True)

    preview = lazy("doctor", "--import-memory")
    imported = lazy("doctor", "--import-memory", "--yes")
    again = lazy("doctor", "--import-memory", "--yes", CLAUDE_CONFIG_DIR=str(linked_config))

    for done in (preview, imported, again):
        assert done.returncode == 0, done.stderr
    state = scene.state()
    assert SENTINEL not in repr(state)
    for path in isolated_environment.glob("memory.db*"):
        assert SENTINEL.encode() not in path.read_bytes(), path
    names = {record.name for record in state.records}
    assert {"inside", "harness-note"} <= names
    assert "stolen" not in names
    assert "a link pointing outside" in preview.stdout


# Editor features read documents the client never opened.


async def test_an_editor_request_never_reads_a_file_the_client_did_not_open(
    scene: Scene,
) -> None:
    secret = scene.outside / "notes.md"
    secret.write_text("see memory:seed-0 and [[seed-1]]\n")
    agent_token = add_token(scene.data_dir, "agent", "helper", task="t")
    directory = Path(tempfile.mkdtemp(prefix="lzb-"))
    with running_daemon(scene.data_dir, f"unix:{directory / 's'}") as daemon:
        client = await connect(daemon)
        await client.initialize({"token": agent_token})
        links = await client.request(
            "textDocument/documentLink", {"textDocument": {"uri": secret.as_uri()}}
        )
        client.writer.close()
        daemon.stop()
    assert links.get("result") in (None, []), f"the daemon read {secret}: {links}"
