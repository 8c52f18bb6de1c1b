"""`lazy init --claude-code` on a repository's own files, in every style they come in: checked with
real git and by the byte. It only adds (the line before an addition gains the comma that joins
it on), keeps each file's indentation, key order, line endings, characters and final newline,
and `--remove` gives every file back byte for byte.

Each test gets its own HOME (no global git configuration), CLAUDE_CONFIG_DIR and LAZY_DATA,
and a real repository (conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import HOOK_COMMAND, our_hook, our_server, read_json
from tests.e2e.init_claude_code.repository import git

FILES: dict[str, dict[str, Any]] = {
    ".claude/settings.json": {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {"allow": ["Bash(make test)"], "deny": []},
        "hooks": {
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "hello.sh"}]}
            ]
        },
        "env": {"GREETING": "héllo ✓ 日本"},
        "autoMemoryEnabled": True,
    },
    ".claude/settings.local.json": {
        "permissions": {"allow": ["WebFetch"]},
        "enabledMcpjsonServers": ["github"],
    },
    ".mcp.json": {
        "mcpServers": {"github": {"command": "gh-mcp", "args": [], "env": {"T": "x"}}},
        "$schema": "keep me",
    },
}


def reordered(value: Any) -> Any:
    """value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


STYLES = {
    "two spaces": lambda value: json.dumps(value, indent=2, ensure_ascii=False) + "\n",
    "four spaces": lambda value: json.dumps(value, indent=4, ensure_ascii=False) + "\n",
    "tabs": lambda value: json.dumps(value, indent="\t", ensure_ascii=False) + "\n",
    "no final newline": lambda value: json.dumps(value, indent=2, ensure_ascii=False),
    "CRLF": lambda value: (
        json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    ),
    "escaped unicode, keys in odd order": lambda value: (
        json.dumps(reordered(value), indent=2) + "\n"
    ),
    "one line": lambda value: json.dumps(value, ensure_ascii=False) + "\n",
}


def written(project: Path, style: str) -> dict[str, bytes]:
    """The files in style, committed; their bytes."""
    originals = {}
    for name, value in FILES.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(STYLES[style](value).encode("utf-8"))
        originals[name] = path.read_bytes()
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the team's files")
    return originals


def diff_lines(project: Path, name: str) -> tuple[list[str], list[str]]:
    """The lines `git diff` says were taken out of and put into a file."""
    diff = git(project, "diff", "-U0", "--no-color", "--", name)
    body = [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]
    return (
        [line[1:] for line in body if line.startswith("-")],
        [line[1:] for line in body if line.startswith("+")],
    )


@pytest.mark.parametrize("style", STYLES)
def test_init_only_adds_and_remove_gives_every_byte_back(
    lazy: Lazy, project: Path, style: str
) -> None:
    originals = written(project, style)
    git(project, "rm", "-q", "--cached", ".claude/settings.local.json")  # the user's own
    git(project, "commit", "-qm", "local settings are not shared")

    done = lazy("init", "--claude-code", "--yes")

    assert done.returncode == 0, done.stderr
    settings = read_json(project / ".claude/settings.json")
    assert settings["hooks"]["SessionStart"][-1] == our_hook()
    assert settings["autoMemoryEnabled"] is False
    assert read_json(project / ".mcp.json")["mcpServers"]["lazy"] == our_server()
    assert read_json(project / ".claude/settings.local.json")["enabledMcpjsonServers"] == [
        "github",
        "lazy",
    ]
    for name in (".claude/settings.json", ".mcp.json"):
        text = (project / name).read_bytes().decode("utf-8")
        original = originals[name].decode("utf-8")
        taken, put = diff_lines(project, name)
        if style == "one line":
            assert (taken, len(put)) == ([original.rstrip("\n")], 1)
        else:
            # Nothing taken out but what an addition rewrote: a comma, or autoMemoryEnabled.
            for line in taken:
                assert line.rstrip("\r") + "," in [each.rstrip("\r") for each in put] or (
                    "autoMemoryEnabled" in line
                ), line
            assert len(taken) <= 2
        assert text.endswith("\n") == original.endswith("\n")
        assert ("\r\n" in text) == ("\r\n" in original)
        assert text.count("\n") == text.count("\r\n") or "\r\n" not in original
        assert ("\\u00e9" in text) == ("\\u00e9" in original)

    removed = lazy("init", "--claude-code", "--remove")

    assert removed.returncode == 0, removed.stderr
    assert {name: (project / name).read_bytes() for name in FILES} == originals
    assert git(project, "status", "--porcelain") == "?? .claude/settings.local.json\n?? lazy.toml\n"


def test_a_four_space_file_diffs_as_additions_only(lazy: Lazy, project: Path) -> None:
    """The issue's case: a 4-space settings file was rewritten as 2-space (+56/-20)."""
    written(project, "four spaces")

    lazy("init", "--claude-code", "--yes")
    numstat = git(project, "diff", "--numstat", "--", ".claude/settings.json").split()

    taken, _ = diff_lines(project, ".claude/settings.json")
    # lazy's hook group (9 lines, git pairs the comma'd brace with it) and the flipped value.
    assert (int(numstat[0]), int(numstat[1])) == (10, 1)
    assert taken == ['    "autoMemoryEnabled": true']
    text = (project / ".claude/settings.json").read_text(encoding="utf-8")
    assert "\n" + " " * 24 + f'"command": {json.dumps(HOOK_COMMAND)},' in text  # in fours
