"""Claude Code harness trees built in a temporary folder, for the memory reader's tests.

The helpers that write the trees and run the reader (ClaudeCodeMemory) on them; the trees'
fixtures are in conftest.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from lazy_memory.adapters.claude_code.memories import ClaudeCodeMemory
from lazy_memory.engine.importing import HarnessMemory, HarnessScan

GIT_IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def claude_slug(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(*args: str) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], check=True, capture_output=True)


def reader(project: Path, data_dir: Path, home: Path, **extra: str) -> ClaudeCodeMemory:
    return ClaudeCodeMemory(project, data_dir, environ={"HOME": str(home), **extra})


async def scan(project: Path, data_dir: Path, home: Path, **extra: str) -> HarnessScan:
    return await reader(project, data_dir, home, **extra).scan()


def by_name(found: HarnessScan) -> dict[str, HarnessMemory]:
    return {memory.name: memory for memory in found.memories}
