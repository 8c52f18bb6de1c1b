"""The merge and removal of lazy's entries in Claude Code's project files, as pure functions."""

from __future__ import annotations

import copy
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.claude_code.files import read_object, write_text
from lazy_memory.adapters.claude_code.setup import (
    LEGACY_MATCHER,
    Invocation,
    UnexpectedShape,
    hook_entry,
    install_approval,
    install_hook,
    install_server,
    lazy_hook_commands,
    lazy_hook_matchers,
    looks_like_lazy_server,
    misses_sources,
    remove_approval,
    remove_hook,
    remove_server,
    restore_auto_memory,
    running_invocation,
    turn_auto_memory_off,
)
from lazy_memory.engine.errors import InvalidConfig

COMMAND = Invocation(("lazy",)).hook_command(20, ".lazy")
BOUND = 20
SERVER = Invocation(("lazy",)).mcp_server()


def users_settings() -> dict[str, Any]:
    """Settings a user already has: a permission list, their own hooks, a SessionStart entry."""
    return {
        "permissions": {"allow": ["Bash(make test)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "y"}]}
            ],
        },
        "model": "opus",
    }


def test_the_hook_goes_into_empty_settings_whole_with_no_matcher() -> None:
    record: dict[str, Any] = {}

    settings = install_hook({}, COMMAND, BOUND, record)

    # No matcher: Claude Code fires the group on every SessionStart source, fork included.
    assert settings == {
        "hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": COMMAND, "timeout": 30}]}]
        }
    }
    assert record == {"hooks": True, "session_start": True}
    assert lazy_hook_matchers(settings) == [None]


def test_the_hook_is_appended_after_the_users_own_and_nothing_else_moves() -> None:
    before = users_settings()
    record: dict[str, Any] = {}

    after = install_hook(before, COMMAND, BOUND, record)

    assert before == users_settings()  # the input is not edited in place
    assert list(after) == ["permissions", "hooks", "model"]
    assert list(after["hooks"]) == ["PreToolUse", "SessionStart"]
    assert after["hooks"]["SessionStart"] == [
        users_settings()["hooks"]["SessionStart"][0],
        hook_entry(COMMAND, BOUND),
    ]
    assert record == {}


def test_an_older_hook_is_updated_in_place_and_loses_the_matcher_that_missed_fork() -> None:
    older = users_settings()
    older["hooks"]["SessionStart"].append(
        {
            "matcher": LEGACY_MATCHER,
            "hooks": [{"type": "command", "command": "/old/bin/lazy memory context --hook"}],
        }
    )

    updated = install_hook(older, COMMAND, BOUND, {})

    assert lazy_hook_commands(updated) == [COMMAND]
    assert updated["hooks"]["SessionStart"][1] == hook_entry(COMMAND, BOUND)
    assert install_hook(updated, COMMAND, BOUND, {}) == updated


def test_a_matcher_the_user_chose_stays_and_is_known_to_miss_sources() -> None:
    settings = install_hook(users_settings(), COMMAND, BOUND, {})
    settings["hooks"]["SessionStart"][1]["matcher"] = "startup"

    updated = install_hook(settings, COMMAND, BOUND, {})

    assert lazy_hook_matchers(updated) == ["startup"]
    assert misses_sources("startup")
    assert misses_sources(LEGACY_MATCHER)
    assert not any(map(misses_sources, (None, "", "*")))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"hooks": []}, "`hooks` is not a JSON object"),
        ({"hooks": {"SessionStart": {}}}, "`hooks.SessionStart` is not a JSON array"),
    ],
)
def test_a_hook_table_of_the_wrong_type_is_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UnexpectedShape, match=message):
        install_hook(settings, COMMAND, BOUND, {})


def test_removing_the_hook_restores_the_users_settings_exactly() -> None:
    record: dict[str, Any] = {}
    installed = install_hook(users_settings(), COMMAND, BOUND, record)

    assert remove_hook(installed, record) == users_settings()
    fresh: dict[str, Any] = {}
    assert remove_hook(install_hook({}, COMMAND, BOUND, fresh), fresh) == {}


def test_an_empty_session_start_list_lazy_did_not_make_stays() -> None:
    before: dict[str, Any] = {"hooks": {"SessionStart": []}}
    record: dict[str, Any] = {}

    installed = install_hook(before, COMMAND, BOUND, record)

    assert remove_hook(installed, record) == before
    # Without a note, a container lazy's removal empties is taken to be lazy's.
    assert remove_hook(installed, None) == {}


def test_the_mcp_server_is_added_beside_other_servers_and_taken_out_again() -> None:
    before = {"mcpServers": {"github": {"command": "gh-mcp"}}, "other": 1}
    record: dict[str, Any] = {}

    installed = install_server(before, SERVER, record)

    assert installed == {
        "mcpServers": {"github": {"command": "gh-mcp"}, "lazy": SERVER},
        "other": 1,
    }
    # alwaysLoad: Claude Code waits for it and offers its tools with their schemas; no env:
    # lazy finds the store from where Claude Code starts it, as the hook does.
    assert SERVER == {"command": "lazy", "args": ["mcp"], "alwaysLoad": True}
    assert remove_server(installed, record) == before
    fresh: dict[str, Any] = {}
    assert remove_server(install_server({}, SERVER, fresh), fresh) == {}


def test_a_lazy_server_lazy_did_not_write_is_put_back_on_removal() -> None:
    theirs = {"command": "/opt/lazy/bin/lazy", "args": ["mcp"]}
    before = {"mcpServers": {"lazy": theirs, "z": {}}}
    record: dict[str, Any] = {}

    installed = install_server(before, SERVER, record)
    moved = install_server(installed, Invocation(("/new/lazy",)).mcp_server(), record)

    assert list(installed["mcpServers"]) == ["lazy", "z"]
    assert record["server_previous"] == theirs
    assert remove_server(moved, record) == before


def test_an_older_lazy_entry_loses_its_pinned_store_and_keeps_what_the_user_added() -> None:
    older = {"command": "/old/lazy", "args": ["mcp"], "env": {"LAZY_DATA": "/home/a/repo/.lazy"}}
    tuned = {"command": "lazy", "args": ["mcp"], "env": {"LAZY_DATA": "/x", "LAZY_ACTOR": "me"}}
    for before, kept in ((older, {}), (tuned, {"env": tuned["env"]})):
        record: dict[str, Any] = {"server": True}  # the note of the lazy that wrote it
        installed = install_server({"mcpServers": {"lazy": before}}, SERVER, record)
        assert installed["mcpServers"]["lazy"] == {**kept, **SERVER}
        assert record == {"server": True}


def test_without_a_note_only_a_server_that_runs_lazy_mcp_is_removed() -> None:
    module = Invocation((sys.executable, "-m", "lazy_memory.rpc.cli")).mcp_server()
    for server in (SERVER, module):
        assert looks_like_lazy_server(server)
        assert remove_server({"mcpServers": {"lazy": server}}, None) == {}
    someone_elses = {"mcpServers": {"lazy": {"command": "node", "args": ["lazy.js"]}}}
    assert remove_server(someone_elses, None) == someone_elses


def test_the_approval_is_added_once_and_removed_only_when_lazy_added_it() -> None:
    before = {"permissions": {"deny": []}, "enabledMcpjsonServers": ["github"]}
    record: dict[str, Any] = {}

    approved = install_approval(before, record)

    assert approved["enabledMcpjsonServers"] == ["github", "lazy"]
    assert install_approval(approved, {}) == approved
    assert remove_approval(approved, record) == before
    fresh: dict[str, Any] = {}
    assert remove_approval(install_approval({}, fresh), fresh) == {}
    # The user's own approval (their answer to Claude Code's prompt) is theirs.
    assert remove_approval(approved, None) == approved
    users = {"enabledMcpjsonServers": ["lazy"]}
    mine: dict[str, Any] = {}
    assert remove_approval(install_approval(users, mine), mine) == users


def test_auto_memory_goes_back_to_what_it_was_unless_the_user_changed_it_since() -> None:
    for before in ({"a": 1}, {"autoMemoryEnabled": True, "a": 1}):
        record: dict[str, Any] = {}
        off = turn_auto_memory_off(before, record)
        assert off["autoMemoryEnabled"] is False
        assert list(off)[: len(before)] == list(before)  # an existing key keeps its place
        assert restore_auto_memory(off, record) == before
        turned_on_again = {**off, "autoMemoryEnabled": True}
        assert restore_auto_memory(turned_on_again, record) == turned_on_again
    already_off = {"autoMemoryEnabled": False}
    nothing: dict[str, Any] = {}
    assert turn_auto_memory_off(already_off, nothing) == already_off
    assert nothing == {}
    assert restore_auto_memory(already_off, None) == already_off


def test_the_invocation_is_lazy_only_when_path_finds_the_running_script(tmp_path: Path) -> None:
    script = tmp_path / "my bin" / "lazy"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    elsewhere = tmp_path / "lazy"
    elsewhere.write_text("#!/bin/sh\n")

    on_path = running_invocation(str(script), str(script), "/usr/bin/python3")
    other = running_invocation(str(script), str(elsewhere), "/usr/bin/python3")
    module = running_invocation("/src/lazy_memory/rpc/cli/__main__.py", None, "/py")

    assert on_path.words == ("lazy",)
    assert other.words == (str(script),)
    # After the shell's first statement (`exec 3<&0;`), the command quoted as one word.
    words = shlex.split(other.hook_command(BOUND, ".lazy"))
    assert words[2:6] == [str(script), "memory", "context", "--hook"]
    assert other.mcp_server()["command"] == str(script)
    assert module.words == ("/py", "-m", "lazy_memory.rpc.cli")
    assert module.mcp_server()["args"] == ["-m", "lazy_memory.rpc.cli", "mcp"]
    assert [on_path.portable, other.portable, module.portable] == [True, False, False]


def test_a_write_keeps_the_text_its_line_endings_and_the_files_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}")
    path.chmod(0o600)
    text = '{\r\n  "a": ["é"]\r\n}'

    write_text(path, text)

    assert path.read_bytes() == text.encode("utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["settings.json"]  # no temporary file left behind


def test_a_symlinked_settings_file_is_written_through_the_link(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text("{}")
    link = tmp_path / "settings.json"
    link.symlink_to(target)

    write_text(link, '{"a": 1}')

    assert link.is_symlink()
    assert read_object(target) == {"a": 1}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", ""])
def test_a_file_that_is_not_a_json_object_is_refused_by_name(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(text)

    with pytest.raises(InvalidConfig, match=str(path)):
        read_object(path)
    assert read_object(tmp_path / "missing.json") is None


def test_removal_functions_never_edit_their_input() -> None:
    record: dict[str, Any] = {}
    installed = install_hook(users_settings(), COMMAND, BOUND, record)
    kept = copy.deepcopy(installed)

    remove_hook(installed, record)
    restore_auto_memory(installed, record)

    assert installed == kept
