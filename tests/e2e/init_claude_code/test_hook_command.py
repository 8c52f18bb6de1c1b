"""The hook command `lazy init --claude-code` writes, run as Claude Code runs it: the string from
`.claude/settings.json` given to `/bin/sh -c` in the project's root, the SessionStart event on
its standard input. It prints lazy's section untouched when lazy answers, and the engine's
UNAVAILABLE marker, with exit status 0 and a line in the launch log, when lazy cannot be run:
not on the PATH, not executable, killed by a signal, failing, or past its bound.

The set-up is written by the installed `lazy` script found on the PATH, as a user runs it, so
the command starts `lazy` by name; each case then runs it with a PATH of its own, where `lazy`
is missing or is a stand-in that fails in one way.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.engine.context import UNAVAILABLE
from tests.e2e.conftest import Lazy
from tests.e2e.init_claude_code.files import path_without, read_json
from tests.support.components import missing

EVENT = '{"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}'
TOOLS = "/usr/bin:/bin"
"""What the command needs besides lazy (sh, sleep, kill, date), and no lazy."""
STAND_INS = {
    "killed": "#!/bin/sh\nkill -9 $$\n",
    "failing": "#!/bin/sh\necho 'half a section'\nexit 3\n",
    "hanging": "#!/bin/sh\nexec sleep 60\n",
    "recording": (
        '#!/bin/sh\nprintf "%s\\n" "$@" > "$RECORD_TO"\ncat > "$RECORD_TO.in"\necho section\n'
    ),
}


@pytest.fixture
def script() -> Path:
    """The installed `lazy` script beside this interpreter."""
    found = Path(sys.executable).with_name("lazy")
    if not found.exists():
        missing("the installed lazy script", f"none beside {sys.executable} (pip install -e .)")
    return found


def set_up(project: Path, script: Path, *, lazy_toml: str = "") -> str:
    """Run `lazy init --claude-code` as a user does; return the hook command it wrote."""
    if lazy_toml:
        (project / "lazy.toml").write_text(lazy_toml, encoding="utf-8")
    done = subprocess.run(
        [str(script), "init", "--claude-code", "--yes"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{script.parent}{os.pathsep}{os.environ['PATH']}"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    [group] = read_json(project / ".claude" / "settings.json")["hooks"]["SessionStart"]
    [hook] = group["hooks"]
    assert hook["command"].startswith("exec 3<&0; lazy memory context --hook <&3 & pid=$!; ")
    return str(hook["command"])


def run_hook(
    command: str, project: Path, path: str, **environment: str
) -> subprocess.CompletedProcess[str]:
    """The command as Claude Code runs a hook: /bin/sh -c, in the root, the event on stdin."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=project,
        input=EVENT,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, **environment},
        timeout=60,
    )


def stand_in(tmp_path: Path, kind: str, *, executable: bool = True) -> str:
    """A PATH whose `lazy` is a stand-in of kind, then the system's tools."""
    folder = tmp_path / f"bin-{kind}"
    folder.mkdir()
    lazy = folder / "lazy"
    lazy.write_text(STAND_INS.get(kind, "#!/bin/sh\necho never\n"), encoding="utf-8")
    if executable:
        lazy.chmod(lazy.stat().st_mode | stat.S_IXUSR)
    return f"{folder}{os.pathsep}{TOOLS}"


def marker(why: str) -> str:
    return UNAVAILABLE.format(error=why) + "\n"


def logged(data_dir: Path) -> list[dict[str, Any]]:
    log = data_dir / "launches.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line) for line in lines]


def test_with_lazy_on_the_path_the_section_is_lazys_byte_for_byte(
    lazy: Lazy, project: Path, script: Path, isolated_environment: Path
) -> None:
    command = set_up(project, script)
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")
    direct = lazy("memory", "context", "--hook")

    hooked = run_hook(command, project, f"{script.parent}{os.pathsep}{TOOLS}")

    assert hooked.returncode == 0, hooked.stderr
    assert hooked.stdout == direct.stdout
    assert "- deploy (project): How we deploy" in hooked.stdout
    assert [entry["channel"] for entry in logged(isolated_environment)] == ["hook", "hook"]


def test_the_command_runs_lazy_with_the_words_the_cli_answers_first_and_the_event(
    project: Path, script: Path, tmp_path: Path
) -> None:
    from lazy_memory.adapters.config import HOOK_WORDS

    command = set_up(project, script)
    record = tmp_path / "argv"

    hooked = run_hook(command, project, stand_in(tmp_path, "recording"), RECORD_TO=str(record))

    assert hooked.stdout == "section\n"
    assert tuple(record.read_text().split()) == HOOK_WORDS
    assert Path(f"{record}.in").read_text() == EVENT  # the event, as Claude Code wrote it


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("not on the PATH", "lazy: not found on the PATH (or not executable)"),
        ("killed", "lazy: killed by signal 9"),
        ("failing", "lazy: exit status 3"),
    ],
)
def test_when_lazy_cannot_answer_the_model_is_told_and_the_log_says_why(
    project: Path, script: Path, tmp_path: Path, isolated_environment: Path, case: str, why: str
) -> None:
    command = set_up(project, script)
    path = path_without("lazy") if case == "not on the PATH" else stand_in(tmp_path, case)

    hooked = run_hook(command, project, path)

    assert hooked.returncode == 0
    expected = ("half a section\n" if case == "failing" else "") + marker(why)
    assert hooked.stdout == expected
    [entry] = logged(isolated_environment)
    assert {key: entry[key] for key in ("channel", "available", "error")} == {
        "channel": "hook command",
        "available": False,
        "error": why,
    }


def test_a_lazy_that_is_not_executable_gives_the_marker(
    project: Path, script: Path, tmp_path: Path
) -> None:
    command = set_up(project, script)

    hooked = run_hook(command, project, stand_in(tmp_path, "plain", executable=False))

    # dash says 127 for a file it may not execute, bash 126: either is named.
    assert hooked.returncode == 0
    assert hooked.stdout in (
        marker("lazy: not executable"),
        marker("lazy: not found on the PATH (or not executable)"),
    )


def test_a_lazy_past_its_bound_is_stopped_and_the_marker_printed_before_claude_code_gives_up(
    project: Path, script: Path, tmp_path: Path, isolated_environment: Path
) -> None:
    command = set_up(project, script, lazy_toml="[claude_code]\nhook_timeout_seconds = 0.5\n")
    [group] = read_json(project / ".claude" / "settings.json")["hooks"]["SessionStart"]

    hooked = run_hook(command, project, stand_in(tmp_path, "hanging"))

    assert "sleep 2 & sleeper=$!" in command  # twice lazy's own bound
    assert group["hooks"][0]["timeout"] == 12  # Claude Code waits 10 s more than the command
    assert hooked.returncode == 0
    assert hooked.stdout == marker("lazy: no answer within 2 s")
    assert logged(isolated_environment)[-1]["error"] == "lazy: no answer within 2 s"


@pytest.mark.parametrize("task_id", ["", "t-7"])
def test_an_agents_hook_gives_the_marker_and_writes_nothing(
    project: Path, script: Path, isolated_environment: Path, task_id: str
) -> None:
    command = set_up(project, script)

    hooked = run_hook(command, project, path_without("lazy"), LAZY_TASK_ID=task_id)

    assert hooked.stdout == marker("lazy: not found on the PATH (or not executable)")
    assert logged(isolated_environment) == []


def test_without_a_data_directory_the_marker_is_printed_and_nothing_created(
    project: Path, script: Path, tmp_path: Path
) -> None:
    command = set_up(project, script)
    elsewhere = tmp_path / "no-store-yet"

    hooked = run_hook(command, project, path_without("lazy"), LAZY_DATA=str(elsewhere))

    assert hooked.returncode == 0
    assert hooked.stdout.startswith("MEMORY INDEX UNAVAILABLE (lazy: not found")
    assert not elsewhere.exists()


def test_doctor_says_the_last_launch_got_the_marker_because_lazy_could_not_run(
    lazy: Lazy, project: Path, script: Path, tmp_path: Path
) -> None:
    command = set_up(project, script)
    lazy("memory", "save", "deploy", "-t", "project", "-d", "How we deploy", "--body", "b")

    run_hook(command, project, path_without("lazy"))
    missing_lazy = lazy("doctor").stdout
    run_hook(command, project, stand_in(tmp_path, "killed"))
    killed = lazy("doctor").stdout

    assert (
        "(hook): lazy could not be run (lazy: not found on the PATH (or not executable)), so "
        "the session got MEMORY INDEX UNAVAILABLE and no index: put lazy on the PATH Claude "
        "Code starts with"
    ) in missing_lazy
    assert "lazy could not be run (lazy: killed by signal 9)" in killed
    assert "run `lazy memory context --hook` by hand to see why." in killed


def test_the_command_leaves_no_process_behind(project: Path, script: Path, tmp_path: Path) -> None:
    """Its timer (a subshell and its sleep) ends and is reaped with it, when lazy is done first."""
    command = set_up(project, script)
    process = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env={
            **os.environ,
            "PATH": stand_in(tmp_path, "recording"),
            "RECORD_TO": str(tmp_path / "r"),
        },
        start_new_session=True,
    )
    assert process.wait(timeout=60) == 0

    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # nothing of its group is left, not even a zombie


def test_a_lazy_that_fails_at_once_never_waits_out_the_timer(project: Path, script: Path) -> None:
    """lazy missing ends before the timer has set its trap: the timer must still end at once
    (its trap once ran before it knew its sleep, and then waited the whole 20 s for it)."""
    command = set_up(project, script)

    for _ in range(20):
        # A hang check, not a speed target: the bound is 20 s, the command takes milliseconds.
        hooked = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=project,
            input=EVENT,
            capture_output=True,
            text=True,
            env={**os.environ, "PATH": path_without("lazy")},
            timeout=10,
        )
        assert hooked.stdout.startswith("MEMORY INDEX UNAVAILABLE (lazy: not found")
