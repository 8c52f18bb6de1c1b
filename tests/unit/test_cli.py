"""The `lazy` command line's start: its parser needs none of the engine's models or backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lazy_memory.engine.doctor import Remedy
from lazy_memory.rpc.cli import doctor

REPOSITORY = Path(__file__).parents[2]

_PROBE = """
import json, sys
from lazy_memory.rpc.cli import build_parser
build_parser().parse_args(["memory", "list"])
print(json.dumps(sorted(sys.modules)))
"""


def test_building_the_parser_imports_neither_pydantic_nor_a_backend() -> None:
    # Every command pays for what the parser imports: the models and drivers wait for the
    # commands that use them.
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    probed = subprocess.run(
        [sys.executable, "-c", _PROBE],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
        cwd=REPOSITORY,
    )
    modules = set(json.loads(probed.stdout))

    heavy = {"pydantic", "asyncio", "aiosqlite", "asyncpg", "sqlite3", "pygls", "mcp", "yaml"}
    assert modules & heavy == set()
    # The errors, the constants (record types, limits), and the wording of counts: none
    # imports a model.
    assert not {module for module in modules if module.startswith("lazy_memory.engine.")} - {
        "lazy_memory.engine.errors",
        "lazy_memory.engine.constants",
        "lazy_memory.engine.wording",
    }


def test_doctor_has_an_exit_status_for_every_remedy() -> None:
    assert set(doctor.EXIT_STATUSES) == {member.value for member in Remedy}
