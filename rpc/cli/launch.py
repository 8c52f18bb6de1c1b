"""`lazy launch claude`: start a Claude Code session with the whole launch context in its prompt.

A SessionStart hook's output reaches the model whole only up to 10,000 characters, but a
file given to `--append-system-prompt-file` is carried whole (3,000,000 characters measured,
no limit documented). So an orchestrator or a script that starts sessions does it through
the launcher: it renders the launch context of the role (the UNAVAILABLE marker if the store
cannot be read: the session starts anyway), writes it to a private file, and starts
`claude --append-system-prompt-file FILE [--mcp-config=...] ARGS...` with the role and task
id in the environment (so the hook and `lazy mcp` agree with it), `LAZY_LAUNCHED=1` (so the
hook that `lazy init --claude-code` installed prints nothing: nothing is injected twice) and
Claude Code's own auto memory off. Its first model request offers lazy's tools with their
schemas, whether or not the project ran `lazy init --claude-code`: unless the project's
`.mcp.json` already starts an always-loaded `lazy`, the launcher passes one in its place
(`"alwaysLoad": true` makes Claude Code wait for that server alone, where
MCP_CONNECTION_NONBLOCKING=0 would hold the session for every server). The file is removed
when the session ends.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from lazy_memory.adapters.config import TASK_ID_VARIABLE, is_agent
from lazy_memory.rpc.cli.common import common_flags, print_json
from lazy_memory.rpc.cli.context import LAUNCHED_VARIABLE, ROLE_VARIABLE, read_launch_context
from lazy_memory.rpc.usage import UsageError

CLAUDE_VARIABLE = "LAZY_CLAUDE"
"""The Claude Code executable to start, when it is not `claude` on PATH."""
HARNESS_ENVIRONMENT = {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
EXIT_NOT_FOUND = 127


def add_commands(commands: Any) -> None:
    """Add `lazy launch` to the top-level command parser."""
    launch = commands.add_parser(
        "launch",
        parents=[common_flags()],
        help="start a Claude Code session with the whole memory index in its system prompt",
        description="Render the launch context of the role and start Claude Code with it as "
        "--append-system-prompt-file, lazy's MCP server always loaded (unless the project's "
        ".mcp.json already has it so), the role and task id in its environment and its own "
        "auto memory off. Every argument after -- goes to claude unchanged: "
        "lazy launch claude --task-id T -- -p 'review the diff'.",
    )
    launch.add_argument("harness", choices=["claude"], help="the harness to start")
    launch.add_argument("--role", choices=["builder", "agent"], help="default: builder")
    launch.add_argument("--task-id", metavar="ID", help="the agent's task id (makes it an agent)")
    launch.add_argument(
        "--claude",
        metavar="PATH",
        help=f"the claude executable (default ${CLAUDE_VARIABLE} or claude)",
    )
    launch.add_argument(
        "--print-command",
        action="store_true",
        help="print what would run instead of running it (the prompt file is kept)",
    )
    # Filled by the CLI's entry point with what follows `--`, before argparse sees it.
    launch.set_defaults(arguments=[])
    launch.set_defaults(run=run_launch)


async def run_launch(arguments: argparse.Namespace) -> int:
    """Render the launch context, start claude with it, and return claude's exit status."""
    from lazy_memory.adapters.launch.log import record_launch
    from lazy_memory.engine.context import Role

    role = Role.AGENT if arguments.task_id is not None else Role(arguments.role or "builder")
    if role is Role.AGENT and arguments.task_id is None:
        raise UsageError("an agent launch needs its task id: add --task-id ID")
    if role is Role.BUILDER and is_agent(os.environ):
        from lazy_memory.engine.errors import PermissionDenied

        raise PermissionDenied(
            "this session is an agent (LAZY_TASK_ID is set) and may only launch agents: "
            "add --task-id ID"
        )
    settings, context = await read_launch_context(role, None)
    prompt_file = _write_prompt(context.text, role.value)
    environment = {LAUNCHED_VARIABLE: "1", ROLE_VARIABLE: role.value, **HARNESS_ENVIRONMENT}
    if arguments.task_id is not None:
        environment[TASK_ID_VARIABLE] = arguments.task_id
    claude = arguments.claude or os.environ.get(CLAUDE_VARIABLE) or "claude"
    command = [
        claude,
        "--append-system-prompt-file",
        prompt_file,
        *_mcp_config(arguments.arguments),
        *arguments.arguments,
    ]
    if arguments.print_command:
        _print_command(arguments, command, environment, prompt_file, context.as_json())
        return 0
    record_launch(settings.data_dir, "launch", context.as_json())
    try:
        return _run(command, {**os.environ, **environment})
    finally:
        os.unlink(prompt_file)


def _mcp_config(claude_arguments: list[str]) -> list[str]:
    """`--mcp-config=JSON` with lazy's server, unless the project's own already serves."""
    from pathlib import Path

    from lazy_memory.adapters.claude_code.files import project_mcp_server
    from lazy_memory.adapters.claude_code.setup import current_invocation, launch_mcp_config

    config = launch_mcp_config(
        project_mcp_server(Path.cwd()), current_invocation(), claude_arguments
    )
    # With `=`: the option takes several values, and would read a prompt after it as one.
    return [] if config is None else [f"--mcp-config={config}"]


def _write_prompt(text: str, role: str) -> str:
    """The launch context in a file only this user can read, for claude to read at start."""
    import tempfile  # here: building the parser (every command, the hook too) must not pay

    descriptor, path = tempfile.mkstemp(prefix=f"lazy-memory-{role}-", suffix=".md")
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    return path


def _run(command: list[str], environment: dict[str, str]) -> int:
    """Run claude in the foreground, passing on the signals a supervisor sends the launcher."""
    import signal
    import subprocess

    try:
        process = subprocess.Popen(command, env=environment)
    except OSError as error:
        from lazy_memory.rpc.cli.errors import report

        return report(
            "CommandNotFound",
            f"cannot start {command[0]}: {error.strerror}; install Claude Code (npm install -g "
            f"@anthropic-ai/claude-code) or name it with --claude or ${CLAUDE_VARIABLE}",
            EXIT_NOT_FOUND,
        )

    def forward(number: int, _frame: object) -> None:
        process.send_signal(number)

    # Ctrl-C reaches claude from the terminal itself; a supervisor's TERM or HUP reaches
    # only this process, so it is passed on, and claude decides how to end.
    previous = {
        number: signal.signal(number, handler)
        for number, handler in (
            (signal.SIGINT, signal.SIG_IGN),
            (signal.SIGTERM, forward),
            (signal.SIGHUP, forward),
        )
    }
    try:
        status = process.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status if status >= 0 else 128 - status


def _print_command(
    arguments: argparse.Namespace,
    command: list[str],
    environment: dict[str, str],
    prompt_file: str,
    context: dict[str, Any],
) -> None:
    if arguments.json:
        print_json(
            {
                "command": command,
                "environment": environment,
                "prompt_file": prompt_file,
                # The JSON field keeps its name, "section": it is the launch context.
                "section": {key: value for key, value in context.items() if key != "text"},
            }
        )
        return
    import shlex

    assignments = [f"{key}={shlex.quote(value)}" for key, value in environment.items()]
    print(" ".join(["env", *assignments, shlex.join(command)]))
