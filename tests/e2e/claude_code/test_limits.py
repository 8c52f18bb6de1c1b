"""What the real Claude Code shows the model of a hook's output and of an MCP tool's result.

The figures lazy-memory sizes its output by (lazy_memory.adapters.config) were measured on
CLAUDE_CODE_MEASURED_VERSION; these tests measure them again on every run, so an upgrade that
moves a limit fails here, saying what it saw. Measured on 2.1.332 (2.1.197, pinned before it,
gave the same figures):

- A SessionStart hook's output (trimmed of surrounding whitespace) reaches the model whole up
  to DEFAULT_HOOK_LIMIT_CHARS (10,000) UTF-16 code units, JavaScript's string length: not
  bytes (10,000 Korean syllables, 30,000 UTF-8 bytes, arrive whole), not code points (5,100
  emoji, 10,200 units, do not). Past it the model gets `<persisted-output> Output too large
  (...KB). Full output saved to: FILE ... Preview (first 2KB): ...`. JSON
  `hookSpecificOutput.additionalContext` is held to the same figure, counted on the context
  alone (not the JSON around it). The cap is per hook command.
- An MCP tool result reaches the model whole up to 50,000 UTF-16 units, and is persisted the
  same way past it. A tool whose `tools/list` entry declares
  `"_meta": {"anthropic/maxResultSizeChars": N}` gets N instead, at most
  DEFAULT_TOOL_RESULT_LIMIT_CHARS (500,000): a larger declaration is held to 500,000.
- An undeclared tool's result is also held to 25,000 tokens (MAX_MCP_OUTPUT_TOKENS): from
  about 50,000 units Claude Code asks `count_tokens`, and a count over 25,000 replaces the
  result with "Error: result (N characters across L lines) exceeds maximum allowed tokens"
  and a file path, no preview. A declared tool's result is not counted at all.
- A file given to `--append-system-prompt-file` reaches the system prompt whole: no limit
  was found (3,000,000 units arrived whole); APPENDED_FILE_UNITS is what is checked.

The tool servers here are entries with `"alwaysLoad": true`, as lazy's is: 2.1.332 would
otherwise defer their tools behind ToolSearch, and a model could not call what it was never
shown. Each test checks that the tools it calls were offered in the first request.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.config import DEFAULT_HOOK_LIMIT_CHARS, DEFAULT_TOOL_RESULT_LIMIT_CHARS
from tests.e2e.claude_code import sized_tool_server as sized
from tests.e2e.claude_code.harness import (
    PINNED_VERSION,
    ClaudeCode,
    check_run,
    python_command,
    stdio_server,
    write_mcp_config,
    write_session_start_hooks,
)
from tests.support.anthropic_messages import text_of
from tests.support.fake_anthropic import ToolResult, ToolUse

pytestmark = pytest.mark.claude_code

TOOL_RESULT_DEFAULT_LIMIT_CHARS = 50_000
"""What Claude Code shows whole of a tool result that declares no cap of its own."""
MCP_OUTPUT_TOKEN_CAP = 25_000
"""The token count past which an undeclared tool's result is refused (MAX_MCP_OUTPUT_TOKENS)."""
PERSISTED = "<persisted-output>"
TOO_LARGE = "Output too large"
TOO_MANY_TOKENS = "exceeds maximum allowed tokens"
APPENDED_FILE_UNITS = 1_000_000
"""What an appended system prompt file is checked to carry whole: more than a 5,000-record
section (about 700,000 characters), which `lazy launch claude` hands over that way."""
KOREAN = "한국어메모리"
EMOJI = "\U0001f600"  # 2 UTF-16 code units, 1 code point, 4 UTF-8 bytes
_EMITTER = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
_SIZED = Path(sized.__file__)


def utf16_units(text: str) -> int:
    """text's length as JavaScript counts it."""
    return len(text.encode("utf-16-le")) // 2


def hook_text(units: int, fill: str, label: str) -> str:
    """Exactly units UTF-16 units: lines of label padded with fill, then a marker line."""
    ending = f"\nHOOK-END-{label}"
    return sized.sized_text_body(units - len(ending), fill, prefix=label) + ending


@dataclass(frozen=True)
class Hook:
    """One SessionStart hook: what it prints, whether as JSON additionalContext, its marker."""

    label: str
    text: str
    as_json: bool = False

    @property
    def marker(self) -> str:
        """The text's last line, unique to this hook."""
        return self.text.rsplit("\n", 1)[-1]

    @property
    def first_line(self) -> str:
        """The text's first line, which a 2 KB preview still holds."""
        return self.text.split("\n", 1)[0]

    def output(self) -> str:
        """What the hook command writes to stdout."""
        if not self.as_json:
            return self.text
        context = {"hookEventName": "SessionStart", "additionalContext": self.text}
        return json.dumps({"hookSpecificOutput": context}, ensure_ascii=False)

    def describe(self) -> str:
        """The size of the text by every count, for failure messages."""
        return (
            f"{self.label}: {utf16_units(self.text):,} UTF-16 units, {len(self.text):,} code "
            f"points, {len(self.text.encode()):,} UTF-8 bytes"
            f"{' as additionalContext' if self.as_json else ''}"
        )


def hook(label: str, units: int, fill: str = "x", as_json: bool = False) -> Hook:
    """A hook printing exactly units UTF-16 units of fill, ending in a marker unique to label."""
    return Hook(label, hook_text(units, fill, label), as_json)


def run_with_hooks(claude_code: ClaudeCode, project: Path, *hooks: Hook) -> str:
    """Run Claude Code with one SessionStart hook per Hook; what the model first got."""
    outputs = project.parent / "hook-outputs"
    outputs.mkdir(exist_ok=True)
    commands = []
    for each in hooks:
        path = outputs / f"{each.label}.txt"
        path.write_bytes(each.output().encode("utf-8"))
        commands.append(python_command("-c", _EMITTER, path))
    write_session_start_hooks(project, *commands)
    check_run(claude_code.run("Say done.", cwd=project))
    return claude_code.api.requests_text()


def assert_whole(seen: str, *hooks: Hook) -> None:
    """Every hook's text reached the model whole."""
    cut = [each.describe() for each in hooks if each.text not in seen]
    assert not cut, (
        f"Claude Code {PINNED_VERSION} no longer shows these hook outputs whole: {cut}; "
        f"{TOO_LARGE!r} {'appears' if TOO_LARGE in seen else 'does not appear'} in the "
        "context. Re-measure and update DEFAULT_HOOK_LIMIT_CHARS."
    )


def assert_persisted(seen: str, *hooks: Hook) -> None:
    """Every hook's text was replaced by a persisted-output preview."""
    whole = [each.describe() for each in hooks if each.marker in seen]
    assert not whole, (
        f"Claude Code {PINNED_VERSION} now shows these hook outputs whole: {whole}; the limit "
        f"is no longer {DEFAULT_HOOK_LIMIT_CHARS:,}. Re-measure and update "
        "DEFAULT_HOOK_LIMIT_CHARS."
    )
    assert seen.count(TOO_LARGE) == len(hooks), seen.count(TOO_LARGE)
    assert PERSISTED in seen
    assert "Preview (first 2KB)" in seen
    for each in hooks:
        assert each.first_line in seen, f"the preview of {each.label} is missing"


@pytest.mark.parametrize("as_json", [False, True], ids=["stdout", "additional-context"])
def test_hook_output_up_to_the_limit_reaches_the_model_whole(
    claude_code: ClaudeCode, project: Path, as_json: bool
) -> None:
    under = hook("under", DEFAULT_HOOK_LIMIT_CHARS - 100, as_json=as_json)
    at = hook("at", DEFAULT_HOOK_LIMIT_CHARS, as_json=as_json)
    seen = run_with_hooks(claude_code, project, under, at)
    # Two hooks of nearly the limit each, both whole: the cap is per hook command.
    assert_whole(seen, under, at)
    assert TOO_LARGE not in seen
    assert PERSISTED not in seen


@pytest.mark.parametrize("as_json", [False, True], ids=["stdout", "additional-context"])
def test_hook_output_over_the_limit_is_persisted_with_a_preview(
    claude_code: ClaudeCode, project: Path, as_json: bool
) -> None:
    just_over = hook("just-over", DEFAULT_HOOK_LIMIT_CHARS + 1, as_json=as_json)
    over = hook("over", DEFAULT_HOOK_LIMIT_CHARS + 100, as_json=as_json)
    seen = run_with_hooks(claude_code, project, just_over, over)
    assert_persisted(seen, just_over, over)


def test_hook_limit_counts_utf16_code_units(claude_code: ClaudeCode, project: Path) -> None:
    mixed = hook("korean-and-emoji", DEFAULT_HOOK_LIMIT_CHARS - 100, fill=KOREAN + EMOJI)
    korean = hook("korean", DEFAULT_HOOK_LIMIT_CHARS, fill=KOREAN)
    emoji = hook("emoji-at", DEFAULT_HOOK_LIMIT_CHARS, fill=EMOJI)
    many_emoji = hook("emoji-over", 2 * 5_100, fill=EMOJI)
    assert len(mixed.text.encode()) > DEFAULT_HOOK_LIMIT_CHARS > len(mixed.text)
    assert len(korean.text.encode()) > 2 * DEFAULT_HOOK_LIMIT_CHARS
    assert len(many_emoji.text) < DEFAULT_HOOK_LIMIT_CHARS < utf16_units(many_emoji.text)
    seen = run_with_hooks(claude_code, project, mixed, korean, emoji, many_emoji)
    # Not bytes: 9,900 and 10,000 units of many more bytes arrive whole.
    assert_whole(seen, mixed, korean, emoji)
    # Not code points: fewer than 5,200 code points, but 10,200 units, do not.
    assert_persisted(seen, many_emoji)


def run_with_tool_calls(
    claude_code: ClaudeCode,
    project: Path,
    calls: list[ToolUse],
    servers: dict[str, dict[str, Any]],
) -> list[ToolResult]:
    """Run Claude Code with the sized servers in .mcp.json and the model making calls."""
    write_mcp_config(project / ".mcp.json", servers)
    claude_code.api.script(*calls, "done")
    allowed = sorted({call.name for call in calls})
    check_run(claude_code.run("Call the tools.", "--allowedTools", ",".join(allowed), cwd=project))
    offered = claude_code.api.tool_names(0)
    assert set(allowed) <= set(offered), f"not offered in the first request: {offered}"
    results = claude_code.api.tool_results()
    assert len(results) == len(calls), [result.content[:200] for result in results]
    assert not any(result.is_error for result in results), [r.content[:200] for r in results]
    return results


def sized_call(
    chars: int, fill: str = "x", server: str = "sized", declared: bool = False
) -> ToolUse:
    """The model calling a sized tool for chars UTF-16 units of fill."""
    tool = sized.DECLARED_TOOL if declared else sized.TOOL
    return ToolUse(f"mcp__{server}__{tool}", {"chars": chars, "fill": fill})


def describe_call(call: ToolUse) -> str:
    """A tool call, for failure messages."""
    return f"{call.name}({call.input['chars']:,} units of {call.input['fill']!r})"


def assert_results(
    calls: list[ToolUse], results: list[ToolResult], expected: list[str], limit: str
) -> None:
    """Each result is whole, persisted or refused for its token count, as expected says."""
    seen = [_outcome(call, result) for call, result in zip(calls, results, strict=True)]
    wrong = [
        f"{describe_call(call)}: {got}, not {want}"
        for call, got, want in zip(calls, seen, expected, strict=True)
        if got != want
    ]
    assert not wrong, (
        f"Claude Code {PINNED_VERSION} moved the tool result limit: {wrong}. "
        f"Re-measure and update {limit}."
    )


def _outcome(call: ToolUse, result: ToolResult) -> str:
    whole = sized.sized_text_body(call.input["chars"], call.input["fill"])
    if result.content == whole:
        return "whole"
    if result.content.startswith(PERSISTED) and TOO_LARGE in result.content:
        assert "Preview (first 2KB)" in result.content
        assert whole.split("\n", 1)[0] in result.content, "the preview is not the result's start"
        return "persisted"
    if TOO_MANY_TOKENS in result.content:
        return "refused"
    return f"something else: {result.content[:300]!r}"


def test_tool_result_without_a_declared_cap_is_whole_up_to_50_000_units(
    claude_code: ClaudeCode, project: Path
) -> None:
    claude_code.api.token_counter = lambda body: 1  # keep the token cap out of this measure
    limit = TOOL_RESULT_DEFAULT_LIMIT_CHARS
    calls = [
        sized_call(limit - 100),
        sized_call(limit),
        sized_call(limit + 1),
        sized_call(limit + 100),
        sized_call(limit, fill=EMOJI),
        sized_call(limit + 1, fill=EMOJI),
    ]
    servers = {"sized": stdio_server(sys.executable, _SIZED, always_load=True)}
    results = run_with_tool_calls(claude_code, project, calls, servers)
    expected = ["whole", "whole", "persisted", "persisted", "whole", "persisted"]
    assert_results(calls, results, expected, "TOOL_RESULT_DEFAULT_LIMIT_CHARS (50,000)")


def test_tool_result_declaring_max_result_size_chars_is_whole_up_to_500_000(
    claude_code: ClaudeCode, project: Path
) -> None:
    # A declared tool is never token-counted: a huge count changes nothing.
    claude_code.api.token_counter = lambda body: 10 * MCP_OUTPUT_TOKEN_CAP
    limit = DEFAULT_TOOL_RESULT_LIMIT_CHARS
    calls = [
        sized_call(300_000, declared=True),
        sized_call(100_000, fill=EMOJI, declared=True),
        sized_call(limit, declared=True),
        sized_call(limit + 1, declared=True),
        sized_call(limit + 1, server="wide", declared=True),
    ]
    servers = {
        "sized": stdio_server(sys.executable, _SIZED, always_load=True),
        "wide": stdio_server(sys.executable, _SIZED, str(2 * limit), always_load=True),
    }
    results = run_with_tool_calls(claude_code, project, calls, servers)
    # The last declares 1,000,000 and is still held to 500,000.
    expected = ["whole", "whole", "whole", "persisted", "persisted"]
    assert_results(calls, results, expected, "DEFAULT_TOOL_RESULT_LIMIT_CHARS")


def test_tool_result_without_a_declared_cap_is_refused_past_25_000_tokens(
    claude_code: ClaudeCode, project: Path
) -> None:
    marked = "\U0001f601"

    def count(body: dict[str, Any]) -> int:
        over = marked in json.dumps(body, ensure_ascii=False)
        return MCP_OUTPUT_TOKEN_CAP + 1 if over else MCP_OUTPUT_TOKEN_CAP

    claude_code.api.token_counter = count
    size = TOOL_RESULT_DEFAULT_LIMIT_CHARS + 100
    calls = [sized_call(size, fill=EMOJI), sized_call(size, fill=marked)]
    servers = {"sized": stdio_server(sys.executable, _SIZED, always_load=True)}
    results = run_with_tool_calls(claude_code, project, calls, servers)
    assert_results(calls, results, ["persisted", "refused"], "MCP_OUTPUT_TOKEN_CAP")
    counted = [r for r in claude_code.api.requests if "count_tokens" in r.path]
    assert len(counted) == 2, f"count_tokens was asked {len(counted)} times, not once a result"


def test_an_appended_system_prompt_file_reaches_the_model_whole(
    claude_code: ClaudeCode, project: Path
) -> None:
    text = sized.sized_text_body(APPENDED_FILE_UNITS, fill=KOREAN + EMOJI)
    appended = project.parent / "appended.txt"
    appended.write_text(text, encoding="utf-8")

    check_run(claude_code.run("Say done.", "--append-system-prompt-file", appended, cwd=project))

    system = text_of(claude_code.api.message_requests[0].body["system"])
    assert text in system, (
        f"Claude Code {PINNED_VERSION} no longer carries a {utf16_units(text):,}-unit "
        "appended system prompt file whole: `lazy launch claude` relies on it"
    )
