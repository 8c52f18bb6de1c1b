"""The README's quick start, run as written on a Python that follows PEP 668 (issue #30, point 9).

Such a Python (Debian's, Ubuntu's, Homebrew's) refuses `pip install` outside a virtual
environment, so the quick start must make one. The test runs the quick start's first command,
word for word, in a copy of this checkout, with nothing on PATH but that Python's folder and
the system's: a fresh venv, a real `pip install .` that builds and installs the checkout, and
the `lazy` it installs.

What it may not do is download the dependencies: they come from the ones this test runs on.
PYTHONPATH names a folder that links to exactly the installed distributions lazy-memory
depends on (its requirements, followed to the end, extras left out): pip's resolver finds
each one there as already satisfied, and the installed `lazy` imports them from there. The
one download is setuptools, into the build's isolated environment, from the index pip is
configured with (as tests/e2e/test_packaging.py's wheel build does). So the venv has the same
Python minor version as this interpreter, whose compiled dependencies it shares.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

from tests.support import documents
from tests.support.components import missing

SOURCE = ("pyproject.toml", "README.md", "engine", "wire", "adapters", "rpc")
"""What `pip install .` builds from: the package's metadata and its four source folders."""

SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
CI_RUN = documents.REPOSITORY / ".ci" / "run"


def _quick_start() -> list[str]:
    """The quick start's commands: one that installs lazy and saves a record, one that runs
    the whole test suite (a line each, of the section's first shell block)."""
    readme = documents.README.read_text()
    block = documents.code_blocks(documents.section(readme, "Quick start"), "sh")[0]
    return block.splitlines()


def _pep_668_python() -> Path:
    """A Python of this minor version that refuses installs outside a venv, with venv."""
    for candidate in map(Path, SYSTEM_PYTHONS):
        if not candidate.exists():
            continue
        probe = subprocess.run(
            [
                candidate,
                "-c",
                "import ensurepip, sys, sysconfig; "
                "print(sysconfig.get_path('stdlib')); print(*sys.version_info[:2])",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode != 0:
            continue
        stdlib, version = probe.stdout.splitlines()
        ours = " ".join(map(str, sys.version_info[:2]))
        if version == ours and (Path(stdlib) / "EXTERNALLY-MANAGED").exists():
            return candidate
    missing(
        "a Python that follows PEP 668",
        f"none of {', '.join(SYSTEM_PYTHONS)} is a Python {sys.version_info[0]}."
        f"{sys.version_info[1]} marked EXTERNALLY-MANAGED with venv "
        "(Debian: apt-get install python3-venv)",
    )


def _dependencies(folder: Path) -> Path:
    """folder, holding a link to every file and folder of lazy-memory's installed dependencies."""
    folder.mkdir()
    seen: set[str] = set()
    wanted = ["lazy-memory"]
    while wanted:
        distribution = importlib.metadata.distribution(wanted.pop())
        name = distribution.metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for requirement in map(Requirement, distribution.requires or ()):
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
        if name == "lazy-memory":
            continue  # the quick start installs this one
        for top in {Path(file).parts[0] for file in distribution.files or ()} - {
            "..",
            "__pycache__",
        }:
            target = Path(str(distribution.locate_file(top)))
            if target.exists() and not (folder / top).exists():
                (folder / top).symlink_to(target)
    return folder


def _clone(folder: Path) -> Path:
    """What `pip install .` builds from, copied from this checkout without its build left-overs,
    in a git root, as a clone is."""
    folder.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in SOURCE:
        source = documents.REPOSITORY / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=ignore)
        else:
            shutil.copy(source, folder / name)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_the_quick_start_installs_lazy_in_a_fresh_venv_and_saves_a_record(tmp_path: Path) -> None:
    python = _pep_668_python()
    quick_start = _quick_start()[0]
    clone = _clone(tmp_path / "lazy-memory")
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LAZY_", "PYTHON", "VIRTUAL_ENV"))
    }
    environment["PATH"] = f"{python.parent}:/usr/bin:/bin"
    environment["PYTHONPATH"] = str(_dependencies(tmp_path / "dependencies"))

    done = subprocess.run(
        ["sh", "-e", "-c", quick_start],
        cwd=clone,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith(
        "created first-note (project), revision 1\n"
        "NAME        TYPE     DESCRIPTION\n"
        "first-note  project  lazy-memory is installed\n"
    ), done.stdout
    assert f"lazy: started a new store in {clone / '.lazy'}" in done.stderr
    assert (clone / ".lazy" / "memory.db").is_file()
    installed = subprocess.run(
        [
            clone / ".venv" / "bin" / "python",
            "-c",
            "import lazy_memory.rpc; print(lazy_memory.rpc.__file__)",
        ],
        cwd=tmp_path,  # not the checkout, whose lazy_memory/ links would be imported
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert installed.stdout.startswith(str(clone / ".venv" / "lib")), installed.stdout


def _commands(script: str) -> list[list[str]]:
    """The Python and pip commands of a shell script, in words: each line that starts with
    one, split at `&&` (the others may be any shell, which shlex need not read)."""
    return [
        shlex.split(command)
        for line in script.splitlines()
        if line.split()[:1] and line.split()[0].startswith(("python", "pip"))
        for command in line.split("&&")
    ]


def _as_the_readme_writes_it(words: list[str]) -> list[str]:
    """A command of .ci/run without what CI adds: `python3 -m pip` for `pip`, `python3` for
    `python`, pip's --quiet and pytest's --durations report."""
    if words[:3] == ["python3", "-m", "pip"]:
        words = ["pip", *words[3:]]
    if words[:1] == ["python3"]:
        words = ["python", *words[1:]]
    return [word for word in words if word != "--quiet" and not word.startswith("--durations")]


def test_the_quick_start_is_two_commands() -> None:
    assert len(_quick_start()) == 2


def test_ci_runs_the_readme_s_test_commands() -> None:
    ci = [_as_the_readme_writes_it(command) for command in _commands(CI_RUN.read_text())]
    test_command = _quick_start()[1]

    assert _commands(test_command)
    for command in _commands(test_command):
        assert command in ci, shlex.join(command)
