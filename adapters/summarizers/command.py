"""The `command` summarizer: any program that reads a prompt on stdin and prints an answer.

`[compact] command` in lazy.toml names it, split like a shell would but run without one
(for example `claude -p` or `llm -m some-model`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal

from lazy_memory.adapters.config import Settings
from lazy_memory.engine.errors import LLMUnavailable


class CommandSummarizer:
    """A Summarizer that runs a command, writing the prompt to its stdin and reading stdout."""

    def __init__(self, settings: Settings, command: str) -> None:
        self.name = "command"
        self.model = command
        self._timeout_seconds = settings.compact_timeout_seconds

    async def summarize(self, prompt: str) -> str:
        """The command's output for prompt, as text; any failure raises LLMUnavailable."""
        process = await self._start()
        try:
            async with asyncio.timeout(self._timeout_seconds):
                stdout, stderr = await process.communicate(prompt.encode("utf-8"))
        except TimeoutError:
            raise LLMUnavailable(
                f"[compact] command {self.model!r} timed out after {self._timeout_seconds:g} s"
            ) from None
        finally:
            if process.returncode is None:
                _kill_group(process)
                await process.wait()
        if process.returncode:
            raise LLMUnavailable(
                f"[compact] command {self.model!r} {_exit_description(process.returncode)}: "
                f"{_last_line(stderr)}"
            )
        try:
            answer = stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise LLMUnavailable(
                f"[compact] command {self.model!r} printed output that is not valid UTF-8"
            ) from None
        if not answer.strip():
            raise LLMUnavailable(f"[compact] command {self.model!r} printed nothing")
        return answer

    def known_failure(self) -> str | None:
        """Why the command cannot be run at all (it cannot be split, is empty or is not
        found), else None: what it answers only running it tells."""
        try:
            program = self._arguments()[0]
        except LLMUnavailable as error:
            return error.message
        if shutil.which(program) is None:
            return f"[compact] command {self.model!r} cannot be run: {program!r} is not found"
        return None

    def _arguments(self) -> list[str]:
        try:
            arguments = shlex.split(self.model)
        except ValueError as error:
            raise LLMUnavailable(
                f"[compact] command {self.model!r} cannot be split: {error}"
            ) from None
        if not arguments:
            raise LLMUnavailable("[compact] command is empty")
        return arguments

    async def _start(self) -> asyncio.subprocess.Process:
        arguments = self._arguments()
        try:
            # A session of its own, so a timeout kills whatever the command started too.
            return await asyncio.create_subprocess_exec(
                *arguments,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise LLMUnavailable(
                f"[compact] command {self.model!r} cannot be run: {error.strerror or error}"
            ) from None


def _kill_group(process: asyncio.subprocess.Process) -> None:
    # The group may have gone between the returncode check and the kill.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _exit_description(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1].strip() if lines else "(nothing on stderr)"
