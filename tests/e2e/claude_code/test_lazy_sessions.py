"""lazy-memory through the real Claude Code: what the model's requests hold at each store size.

Every repository here is set up only by `lazy init --claude-code`; sessions are `claude -p`
runs (the hook), or `lazy launch claude` runs, against the fake Messages API, which records
what the model was given and scripts its tool calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lazy_memory.adapters.config import DEFAULT_HOOK_LIMIT_CHARS
from lazy_memory.engine.context import harness_length
from tests.e2e.claude_code.harness import ClaudeCode, check_run
from tests.e2e.claude_code.lazy_project import fill, launch, lazy, set_up
from tests.support.fake_anthropic import ToolUse

pytestmark = pytest.mark.claude_code

PERSISTED = "persisted-output"
MARKER = "MEMORY INDEX UNAVAILABLE ("
SAVE = "mcp__lazy__lazy_memory_save"
RECALL = "mcp__lazy__lazy_memory_recall"


def history(project: Path) -> list[object]:
    return list(json.loads(lazy(project, "memory", "history", "--json").stdout))


def index_names(text: str) -> set[str]:
    return {line[2:].split(" (", 1)[0] for line in text.splitlines() if line.startswith("- ")}


def test_a_builder_session_gets_the_index(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    lazy(project, "memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    lazy(project, "memory", "save", "style", "-t", "feedback", "-d", "Small modules", "--body", "b")
    claude_code.api.script("done")

    check_run(claude_code.run("hello", cwd=project))

    given = claude_code.api.requests_text(0)
    assert "- deploy (project): How we deploy" in given
    assert "- style (feedback): Small modules" in given
    assert PERSISTED not in given


def test_an_agents_save_is_refused_and_nothing_is_written(
    claude_code: ClaudeCode, project: Path
) -> None:
    set_up(project)
    lazy(project, "memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    before = history(project)
    save = {"name": "learned", "type": "project", "description": "d", "body": "b"}
    claude_code.api.script(ToolUse(SAVE, save), "done")

    check_run(
        claude_code.run(
            "save it", "--allowedTools", SAVE, cwd=project, env={"LAZY_TASK_ID": "task-1"}
        )
    )

    [result] = claude_code.api.tool_results()
    assert result.is_error
    assert "read-only" in result.content
    assert history(project) == before
    assert "- deploy (project): How we deploy" in claude_code.api.requests_text(0)


def test_a_garbage_store_still_launches_with_the_marker_and_a_repaired_one_has_the_index(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    lazy(project, "memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    for path in isolated_environment.glob("memory.db*"):
        path.unlink()
    (isolated_environment / "memory.db").write_bytes(b"garbage " * 4096)
    claude_code.api.script("done")

    check_run(claude_code.run("hello", cwd=project))
    broken = claude_code.api.requests_text(0)
    (isolated_environment / "memory.db").unlink()
    lazy(project, "memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    check_run(claude_code.run("hello again", cwd=project))
    repaired = claude_code.api.requests_text(len(claude_code.api.message_requests) - 1)

    assert MARKER in broken
    assert "No memory records have been saved" not in broken
    assert "- deploy (project): How we deploy" in repaired
    assert MARKER not in repaired


def test_300_records_a_hook_session_is_whole_and_recall_returns_every_name(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    names = fill(isolated_environment, 300)
    claude_code.api.script(ToolUse(RECALL, {}), "done")

    check_run(claude_code.run("what do you know?", "--allowedTools", RECALL, cwd=project))

    given = claude_code.api.requests_text(0)
    assert PERSISTED not in given
    inline = index_names(given) & set(names)
    assert 0 < len(inline) < 300
    assert f"{300 - len(inline)} of 300 memory records are not listed here" in given
    assert "lazy_memory_recall()" in given
    [recalled] = claude_code.api.tool_results()
    assert not recalled.is_error
    assert PERSISTED not in recalled.content
    assert index_names(recalled.content) >= set(names)


def test_non_ascii_descriptions_are_fitted_as_claude_code_counts_them(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    fill(isolated_environment, 400, descriptions="배포 절차와 스테이징 서버 설정 🚀🔥 관련 메모")
    section = lazy(project, "memory", "context", "--hook").stdout
    claude_code.api.script("done")

    check_run(claude_code.run("hello", cwd=project))

    assert harness_length(section) <= DEFAULT_HOOK_LIMIT_CHARS < len(section.encode("utf-8"))
    given = claude_code.api.requests_text(0)
    assert PERSISTED not in given
    assert section.strip().splitlines()[-2] in given


def test_300_records_a_launched_builder_gets_every_name_once(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    names = fill(isolated_environment, 300)
    claude_code.api.script("done")

    check_run(launch(claude_code, project, "--", "-p", "hello"))

    given = claude_code.api.requests_text(0)
    assert index_names(given) >= set(names)
    assert PERSISTED not in given
    assert "are not listed here" not in given, "the hook printed nothing: injected once"
    assert given.count(f"- {names[0]} (") == 1


def test_a_launched_agent_gets_the_agent_section_and_its_save_is_refused(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    names = fill(isolated_environment, 50)
    before = history(project)
    save = {"name": "learned", "type": "project", "description": "d", "body": "b"}
    claude_code.api.script(ToolUse(SAVE, save), "done")

    check_run(
        launch(claude_code, project, "--task-id", "T-7", "--", "-p", "go", "--allowedTools", SAVE)
    )

    given = claude_code.api.requests_text(0)
    assert index_names(given) >= set(names)
    assert "run `lazy doctor`" not in given, "agents get no doctor pointer"
    [result] = claude_code.api.tool_results()
    assert result.is_error
    assert "T-7" in result.content
    assert history(project) == before


def test_5000_records_recall_pages_and_every_page_arrives_whole(
    claude_code: ClaudeCode, project: Path, isolated_environment: Path
) -> None:
    set_up(project)
    names = fill(isolated_environment, 5000)
    section = lazy(project, "memory", "context").stdout
    assert harness_length(section) > 500_000, "the store must need more than one page"
    claude_code.api.script(ToolUse(RECALL, {}), ToolUse(RECALL, {"page": 2}), "done")

    check_run(claude_code.run("read it all", "--allowedTools", RECALL, cwd=project))

    first, second = claude_code.api.tool_results()
    for page in (first, second):
        assert not page.is_error
        assert PERSISTED not in page.content
        assert harness_length(page.content) <= 500_000
    assert "page 1 of 2" in first.content
    assert "lazy_memory_recall(page=2)" in first.content
    assert index_names(first.content) | index_names(second.content) >= set(names)
