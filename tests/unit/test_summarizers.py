"""The summarizers: the real Anthropic SDK against a fake Messages API, and a real command."""

from __future__ import annotations

import importlib
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters.config import Settings
from lazy_memory.adapters.summarizers.anthropic_api import (
    MAX_ANSWER_TOKENS,
    NOT_A_MESSAGE,
    AnthropicSummarizer,
)
from lazy_memory.adapters.summarizers.choice import open_summarizer
from lazy_memory.adapters.summarizers.command import CommandSummarizer
from lazy_memory.engine.errors import LLMUnavailable
from tests.support.fake_anthropic import (
    FAKE_API_KEY,
    FakeAnthropic,
    Reply,
    blocks,
    echo,
    error,
    hang,
    text,
)

PROMPT = "Summarize these records:\n- style (feedback): tabs, not spaces\n"


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(root=tmp_path, data_dir=tmp_path / ".lazy", **overrides)


def python_command(tmp_path: Path, source: str) -> str:
    """A [compact] command running source as a Python script with this interpreter."""
    script = tmp_path / "summarize.py"
    script.write_text(source)
    return shlex.join([sys.executable, str(script)])


# The Anthropic summarizer.


async def test_returns_the_answer_and_sends_model_prompt_and_key(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script("- style (feedback): tabs")
    summarizer = AnthropicSummarizer(make_settings(tmp_path, compact_model="claude-test-model"))

    answer = await summarizer.summarize(PROMPT)

    assert answer == "- style (feedback): tabs"
    [request] = fake_anthropic.requests
    assert request.path == "/v1/messages"
    assert request.api_key == FAKE_API_KEY
    assert request.body["model"] == "claude-test-model"
    assert request.body["max_tokens"] == MAX_ANSWER_TOKENS
    assert request.body["messages"] == [{"role": "user", "content": PROMPT}]


async def test_joins_the_text_blocks_and_skips_the_others(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(
        blocks(
            [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "first half, "},
                {"type": "text", "text": "second half"},
            ]
        )
    )

    answer = await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT)

    assert answer == "first half, second half"


async def test_a_reply_can_be_computed_from_the_request(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(echo)

    assert await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT) == PROMPT


async def test_a_server_error_names_its_status_after_the_retries(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(error(500, "Internal server error"))
    summarizer = AnthropicSummarizer(make_settings(tmp_path), max_retries=1)

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message == "the Anthropic API answered 500: Internal server error"
    assert len(fake_anthropic.requests) == 2


async def test_a_server_error_that_passes_is_retried(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(error(529, "Overloaded"), "the summary")
    summarizer = AnthropicSummarizer(make_settings(tmp_path), max_retries=1)

    assert await summarizer.summarize(PROMPT) == "the summary"
    assert len(fake_anthropic.requests) == 2


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (429, "the Anthropic API rate limited the request (429): slow down"),
        (401, "the Anthropic API rejected the API key (401): slow down"),
        (400, "the Anthropic API answered 400: slow down"),
    ],
)
async def test_each_error_status_has_its_own_reason(
    tmp_path: Path, fake_anthropic: FakeAnthropic, status: int, reason: str
) -> None:
    fake_anthropic.script(error(status, "slow   down\n"))
    summarizer = AnthropicSummarizer(make_settings(tmp_path), max_retries=0)

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message == reason


async def test_a_hanging_api_times_out_within_the_setting_whatever_the_retries(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(hang())
    summarizer = AnthropicSummarizer(
        make_settings(tmp_path, compact_timeout_seconds=0.5), max_retries=2
    )
    # The SDK is imported on the first call (2-3 s here): the bound is on the timeout, so the
    # import happens before the clock starts, whatever ran earlier in this process.
    importlib.import_module("anthropic")
    started = time.monotonic()

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message == "the Anthropic API timed out after 0.5 s"
    assert time.monotonic() - started < 2


async def test_no_api_key_refuses_without_a_request(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    fake_anthropic.script("never sent")

    with pytest.raises(LLMUnavailable, match="no ANTHROPIC_API_KEY is set"):
        await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT)

    assert fake_anthropic.requests == []


def test_a_missing_key_is_known_before_any_call_and_a_key_leaves_it_to_the_call(
    tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    summarizer = AnthropicSummarizer(make_settings(tmp_path))

    with_a_key = summarizer.known_failure()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    without = summarizer.known_failure()

    assert with_a_key is None
    assert without == (
        "no ANTHROPIC_API_KEY is set: export one, or set [compact] command in lazy.toml"
    )
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    "reply", [blocks([]), text(" \n\t "), blocks([{"type": "text", "text": ""}])]
)
async def test_an_empty_answer_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic, reply: Any
) -> None:
    fake_anthropic.script(reply)

    with pytest.raises(LLMUnavailable) as raised:
        await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT)

    assert raised.value.message == "the model returned an empty answer"


async def test_an_answer_cut_off_at_the_token_limit_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script(text("- style (feedback): ta", stop_reason="max_tokens"))

    with pytest.raises(LLMUnavailable, match="cut off at the 4096-token limit"):
        await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=b"<html>Sign in to the proxy</html>", headers={"content-type": "text/html"}),
        Reply(body=b"<html>Sign in to the proxy</html>"),
        Reply(body={"completion": "an answer of another API"}),
    ],
)
async def test_an_answer_that_is_not_a_message_is_refused(
    tmp_path: Path, fake_anthropic: FakeAnthropic, reply: Reply
) -> None:
    fake_anthropic.script(reply)

    with pytest.raises(LLMUnavailable) as raised:
        await AnthropicSummarizer(make_settings(tmp_path)).summarize(PROMPT)

    assert raised.value.message == NOT_A_MESSAGE


async def test_a_refused_connection_names_the_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
    summarizer = AnthropicSummarizer(make_settings(tmp_path), max_retries=0)

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message.startswith(f"cannot connect to http://127.0.0.1:{port}/v1/messages")


# The command summarizer.


async def test_a_command_answers_with_its_output(tmp_path: Path) -> None:
    command = python_command(
        tmp_path,
        "import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read().decode().upper().encode())",
    )
    summarizer = CommandSummarizer(make_settings(tmp_path), command)

    assert (summarizer.name, summarizer.model) == ("command", command)
    assert await summarizer.summarize("café: tabs") == "CAFÉ: TABS"


async def test_a_failing_command_names_its_status_and_last_stderr_line(tmp_path: Path) -> None:
    command = python_command(
        tmp_path,
        "import sys\nprint('partial')\n"
        "sys.stderr.write('warming up\\nmodel not found\\n\\n')\nsys.exit(3)",
    )

    with pytest.raises(LLMUnavailable) as raised:
        await CommandSummarizer(make_settings(tmp_path), command).summarize(PROMPT)

    assert raised.value.message == (
        f"[compact] command {command!r} exited with status 3: model not found"
    )


async def test_a_hanging_command_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = python_command(
        tmp_path,
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"with open({str(pids)!r}, 'w') as pids:\n"
        "    print(os.getpid(), child.pid, file=pids)\n"
        "time.sleep(60)\n",
    )
    summarizer = CommandSummarizer(make_settings(tmp_path, compact_timeout_seconds=1), command)

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message == f"[compact] command {command!r} timed out after 1 s"
    for pid in map(int, pids.read_text().split()):
        assert not is_running(pid)


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("no-such-summarizer-command --flag", "cannot be run: No such file or directory"),
        ("summarize 'unbalanced", "cannot be split: No closing quotation"),
        ("   ", "[compact] command is empty"),
    ],
)
async def test_a_command_that_cannot_start_is_refused(
    tmp_path: Path, command: str, reason: str
) -> None:
    with pytest.raises(LLMUnavailable) as raised:
        await CommandSummarizer(make_settings(tmp_path), command).summarize(PROMPT)

    assert raised.value.message.endswith(reason)


@pytest.mark.parametrize(
    ("command", "known"),
    [
        (
            "no-such-summarizer-command --flag",
            "[compact] command 'no-such-summarizer-command --flag' cannot be run: "
            "'no-such-summarizer-command' is not found",
        ),
        (
            "summarize 'unbalanced",
            '[compact] command "summarize \'unbalanced" cannot be split: No closing quotation',
        ),
        ("   ", "[compact] command is empty"),
    ],
)
def test_what_keeps_a_command_from_starting_is_known_without_running_it(
    tmp_path: Path, command: str, known: str
) -> None:
    assert CommandSummarizer(make_settings(tmp_path), command).known_failure() == known


def test_a_command_that_can_start_leaves_its_answer_to_the_call(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    command = python_command(tmp_path, f"open({str(ran)!r}, 'w')\nprint('summary')")

    assert CommandSummarizer(make_settings(tmp_path), command).known_failure() is None
    assert not ran.exists(), "the command was run"


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import sys\nsys.stdin.read()\nprint('  ')", "printed nothing"),
        ("import sys\nsys.stdout.buffer.write(b'caf\\xe9')", "not valid UTF-8"),
    ],
)
async def test_unusable_output_is_refused(tmp_path: Path, source: str, reason: str) -> None:
    command = python_command(tmp_path, source)

    with pytest.raises(LLMUnavailable, match=reason):
        await CommandSummarizer(make_settings(tmp_path), command).summarize(PROMPT)


def is_running(pid: int, patience_seconds: float = 5) -> bool:
    """Whether pid is still alive (not gone, not a zombie) after waiting a little for it."""
    deadline = time.monotonic() + patience_seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


# Choosing one.


@pytest.mark.parametrize(
    ("command", "name", "model"),
    [(None, "anthropic", "claude-haiku-4-5"), ("claude -p", "command", "claude -p")],
)
async def test_offline_refuses_without_any_call_and_names_what_it_stands_for(
    tmp_path: Path, fake_anthropic: FakeAnthropic, command: str | None, name: str, model: str
) -> None:
    summarizer = open_summarizer(make_settings(tmp_path, offline=True, compact_command=command))

    with pytest.raises(LLMUnavailable) as raised:
        await summarizer.summarize(PROMPT)

    assert raised.value.message == "LAZY_OFFLINE=1: no model calls"
    assert summarizer.known_failure() == "LAZY_OFFLINE=1: no model calls"
    assert (summarizer.name, summarizer.model) == (name, model)
    assert fake_anthropic.requests == []


def test_a_configured_command_is_chosen(tmp_path: Path) -> None:
    summarizer = open_summarizer(make_settings(tmp_path, compact_command="llm -m small"))

    assert isinstance(summarizer, CommandSummarizer)
    assert (summarizer.name, summarizer.model) == ("command", "llm -m small")


def test_anthropic_is_chosen_otherwise(tmp_path: Path) -> None:
    summarizer = open_summarizer(make_settings(tmp_path, compact_model="claude-test-model"))

    assert isinstance(summarizer, AnthropicSummarizer)
    assert (summarizer.name, summarizer.model) == ("anthropic", "claude-test-model")


def test_choosing_a_summarizer_does_not_import_the_sdk(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from lazy_memory.adapters.config import Settings\n"
        "from lazy_memory.adapters.summarizers.choice import open_summarizer\n"
        "open_summarizer(Settings(root=Path('.'), data_dir=Path('.')))\n"
        "print('anthropic' in sys.modules)\n"
    )

    finished = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
        timeout=60,
    )

    assert finished.stdout.strip() == "False"
