"""The architecture's import contracts (pyproject.toml, `lint-imports` in CI): the real tree
keeps them, and a copy of it with one deliberate violation breaks the contract it should."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = ("engine", "wire", "adapters", "rpc")
CONTRACTS = {
    contract["id"]: contract["name"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
}


def lint_imports(where: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports on the tree at where, as CI does (its pyproject.toml, no cache)."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--no-cache",
            "--no-logo",
        ],
        cwd=where,
        env={**os.environ, "PYTHONPATH": str(where)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_keeps_every_contract() -> None:
    linted = lint_imports(ROOT)

    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in linted.stdout
    for name in CONTRACTS.values():
        assert f"{name} KEPT" in linted.stdout


@pytest.mark.parametrize(
    ("module", "violation", "contract"),
    [
        ("engine/visible.py", "import lazy_memory.rpc.jsonrpc.methods", "floors"),
        ("engine/records.py", "from lazy_memory.wire import names", "floors"),
        ("adapters/clock.py", "from lazy_memory.rpc.jsonrpc import server", "floors"),
        ("wire/names.py", "import lazy_memory.adapters.config", "floors"),
        ("engine/visible.py", "import pygls", "engine-io"),
        ("engine/names.py", "import sqlite3", "engine-io"),
        ("wire/params.py", "import asyncpg", "wire-light"),
        (
            "rpc/jsonrpc/stdio.py",
            "from lazy_memory.adapters.sqlite.storage import SqliteStorage",
            "composition-root",
        ),
    ],
)
def test_a_deliberate_violation_breaks_its_contract(
    tmp_path: Path, module: str, violation: str, contract: str
) -> None:
    package = tmp_path / "lazy_memory"
    for floor in FLOORS:
        shutil.copytree(ROOT / floor, package / floor, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with (package / module).open("a") as source:
        source.write(f"\n{violation}  # a deliberate violation\n")

    linted = lint_imports(tmp_path)

    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert f"{CONTRACTS[contract]} BROKEN" in linted.stdout, linted.stdout
    assert f"lazy_memory.{module.removesuffix('.py').replace('/', '.')} ->" in linted.stdout
