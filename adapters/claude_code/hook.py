"""The SessionStart hook's command line, as `lazy init --claude-code` writes it.

Claude Code runs a hook's command with `/bin/sh -c` (dash on Debian, bash on macOS; measured on
2.1.197 and 2.1.332), and drops its output when it exits non-zero or outlives the hook's
timeout: the model then gets no launch context and no word that one is missing. So the
command runs `lazy memory context --hook` itself (those exact words: the CLI answers them
before building a parser) and, when lazy cannot give an answer (not on the PATH Claude Code
runs with, not executable, killed by a signal, or not done within its bound), prints the
engine's own `MEMORY INDEX UNAVAILABLE (<why>)` marker instead, notes it in the launch log
for `lazy doctor` (unless the session is an agent's: agents write nothing), and exits 0.

lazy bounds itself at `[claude_code] hook_timeout_seconds` (10 s); the command bounds lazy at
twice that with a timer that sends SIGALRM (which ends Python by default, and gives an exit
status nothing else gives), and Claude Code's own timeout is ten seconds more, so the command
always ends before Claude Code stops waiting for it. When lazy is done first the timer is
stopped and waited for, its sleep with it: the command leaves no process behind (but for a
sleep orphaned when lazy fails before the timer has set its trap, which holds no output).
"""

from __future__ import annotations

import math
import shlex

from lazy_memory.adapters.config import HOOK_WORDS, TASK_ID_VARIABLE
from lazy_memory.engine.constants import LAUNCH_LOG_FILE

HOOK_MARK = " " + " ".join(HOOK_WORDS)
"""How lazy's own hook is recognised, this command or an older one, whatever starts lazy."""
TIMER_SIGNAL_STATUS = 128 + 14
"""The exit status of a process ended by SIGALRM (14 on Linux and macOS alike)."""
CLAUDE_CODE_MARGIN_SECONDS = 10


def command_bound(hook_timeout_seconds: float) -> int:
    """How long the command lets lazy run: twice lazy's own bound, in whole seconds."""
    return max(2, math.ceil(2 * hook_timeout_seconds))


def claude_code_timeout(bound: int) -> int:
    """The `timeout` of lazy's hook entry: Claude Code waits this long, after the command's."""
    return bound + CLAUDE_CODE_MARGIN_SECONDS


def hook_command(words: tuple[str, ...], *, bound: int, log_dir: str) -> str:
    """The shell command: lazy's hook, or the marker saying why lazy gave none.

    log_dir is where the launch log lives when LAZY_DATA is unset (relative to the project's
    root, where Claude Code runs project hooks); the command appends to it only if it exists.
    """
    from lazy_memory.engine.context import UNAVAILABLE

    marker = _printf_format(UNAVAILABLE.format(error="%s") + "\n")
    data = f"${{LAZY_DATA:-{_in_double_quotes(log_dir)}}}"
    logged = '{"at": "%s", "channel": "hook command", "available": false, "error": "%s"}\\n'
    return "; ".join(
        [
            # lazy reads the SessionStart event as if run alone: in the background sh would
            # give it /dev/null, so the command's own input is handed on by name.
            f"exec 3<&0; {shlex.join([*words, *HOOK_WORDS])} <&3 & pid=$!",
            # Stopped, the timer ends its sleep with it (and reaps it). The trap comes after
            # $sleeper is known: a trap run before would wait for the whole sleep.
            f"(sleep {bound} & sleeper=$!; trap 'kill $sleeper; wait $sleeper; exit' TERM; "
            "wait $sleeper; kill -ALRM $pid) >/dev/null 2>&1 & timer=$!",
            "wait $pid",
            "status=$?",
            "kill $timer 2>/dev/null",
            "wait $timer",
            "case $status in 0) exit 0;; "
            "126) why='lazy: not executable';; "
            "127) why='lazy: not found on the PATH (or not executable)';; "
            f"{TIMER_SIGNAL_STATUS}) why='lazy: no answer within {bound} s';; "
            '129|1[3-9][0-9]|2[0-5][0-9]) why="lazy: killed by signal $((status - 128))";; '
            '*) why="lazy: exit status $status";; esac',
            f'printf {shlex.quote(marker)} "$why"',
            # An agent (adapters/config.py is_agent) writes nothing: sh's own test of it.
            f'[ -z "${{{TASK_ID_VARIABLE}+set}}" ] && [ -w "{data}" ] && printf '
            f'{shlex.quote(logged)} "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" "$why" '
            f'>> "{data}/{LAUNCH_LOG_FILE}"',
            "exit 0",
        ]
    )


def prints_marker(command: str) -> bool:
    """Whether a hook command prints the marker itself (an older lazy's printed nothing)."""
    from lazy_memory.engine.context import UNAVAILABLE

    return UNAVAILABLE.partition("{error}")[0] in command


def is_lazy_hook_command(command: object) -> bool:
    """Whether a hook's command is lazy's (this one or an older one: both run the hook words)."""
    return isinstance(command, str) and HOOK_MARK in command


def _printf_format(text: str) -> str:
    """text as a printf format that prints it, `%s` kept for the one argument."""
    escaped = text.replace("\\", "\\\\").replace("%", "%%").replace("%%s", "%s")
    return escaped.replace("\n", "\\n")


def _in_double_quotes(text: str) -> str:
    """text, to stand for itself between double quotes in sh."""
    for special in ("\\", '"', "$", "`"):
        text = text.replace(special, "\\" + special)
    return text
