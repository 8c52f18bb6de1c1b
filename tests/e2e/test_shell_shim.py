"""editors/shell/lazy, the POSIX sh shim, run by dash with stand-ins for lazy, nix and podman.

Each stand-in is a real executable on a PATH the test controls. It records the arguments it
was given, its working folder and the LAZY_* variables it saw, so every test checks what the
shim really handed on. One test runs the shim against the installed `lazy` itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

SHIM = Path(__file__).resolve().parents[2] / "editors" / "shell" / "lazy"
CHECKOUT = SHIM.parents[2]
SHELL = shutil.which("dash") or "/bin/sh"
# The utilities the shim uses besides the shell's built-ins.
UTILITIES = ("dirname", "readlink", "mkdir", "id", "env", "sed")
# Arguments a careless shim would split, expand or drop.
AWKWARD = [
    "memory",
    "save",
    "two words",
    "it's",
    'say "hi"',
    "$HOME",
    "`id`",
    "$(id)",
    "line one\nline two",
    "",
    "*",
    "--",
    "-e",
    "tab\there",
    "back\\slash",
]

RECORDER = """#!{python}
import json, os, sys
with open(os.environ["SHIM_RECORD"], "w") as record:
    json.dump({{
        "program": os.path.basename(sys.argv[0]),
        "args": sys.argv[1:],
        "cwd": os.getcwd(),
        "env": {{k: v for k, v in os.environ.items() if k.startswith(("LAZY_", "ANTHROPIC_"))}},
    }}, record)
"""


class Machine:
    """A PATH with only the shim's utilities and the stand-ins a test installs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.tools = root / "tools"
        self.record = root / "record.json"
        self.bin.mkdir(parents=True)
        self.tools.mkdir()
        for utility in UTILITIES:
            found = shutil.which(utility)
            assert found, f"{utility} is not installed"
            (self.tools / utility).symlink_to(found)

    def stand_in(self, path: Path) -> Path:
        """Make path an executable that records how it was called."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(RECORDER.format(python=sys.executable))
        path.chmod(0o755)
        return path

    def install(self, *programs: str) -> None:
        """Put stand-ins for programs (nix, podman, docker) on the PATH."""
        for program in programs:
            self.stand_in(self.bin / program)

    def environment(self, **extra: str) -> dict[str, str]:
        """A clean environment: the controlled PATH, a home, the record file, and extra."""
        return {
            "PATH": f"{self.bin}:{self.tools}",
            "HOME": str(self.root / "home"),
            "SHIM_RECORD": str(self.record),
            **extra,
        }

    def run(
        self, cwd: Path, *arguments: str, shim: Path = SHIM, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """Run the shim with dash in cwd."""
        return subprocess.run(
            [SHELL, str(shim), *arguments],
            cwd=cwd,
            env=self.environment(**extra),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def recorded(self) -> dict[str, Any]:
        """What the stand-in that ran was given."""
        assert self.record.exists(), "no stand-in was run"
        loaded: dict[str, Any] = json.loads(self.record.read_text())
        return loaded


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "machine")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with a nested folder to start from."""
    root = tmp_path / "the project"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "deep").mkdir(parents=True)
    return root


def test_the_projects_venv_gets_every_argument_verbatim(machine: Machine, project: Path) -> None:
    machine.install("nix", "podman")
    machine.stand_in(project / ".venv" / "bin" / "lazy")
    finished = machine.run(project / "src" / "deep", *AWKWARD)
    assert finished.returncode == 0, finished.stderr
    called = machine.recorded()
    assert called["args"] == AWKWARD
    assert called["cwd"] == str(project / "src" / "deep")


def test_venv_is_also_found_as_venv_and_the_nearest_wins(machine: Machine, project: Path) -> None:
    machine.stand_in(project / ".venv" / "bin" / "lazy")
    nearer = project / "src"
    machine.stand_in(nearer / "venv" / "bin" / "lazy")
    (project / ".venv" / "bin" / "lazy").chmod(0o644)  # not executable: must not be chosen
    finished = machine.run(nearer / "deep", "memory", "list")
    assert finished.returncode == 0, finished.stderr
    assert machine.recorded()["args"] == ["memory", "list"]
    machine.record.unlink()
    (nearer / "venv" / "bin" / "lazy").unlink()
    (project / ".venv" / "bin" / "lazy").chmod(0o755)
    assert machine.run(nearer / "deep", "doctor").returncode == 0
    assert machine.recorded()["args"] == ["doctor"]


def test_nix_runs_the_flake_in_lazy_flake(machine: Machine, project: Path) -> None:
    machine.install("nix", "podman")
    finished = machine.run(project, *AWKWARD, LAZY_FLAKE="github:example/lazy-memory")
    assert finished.returncode == 0, finished.stderr
    called = machine.recorded()
    assert called["program"] == "nix"
    assert called["args"] == [
        "--extra-experimental-features",
        "nix-command flakes",
        "run",
        "github:example/lazy-memory",
        "--",
        *AWKWARD,
    ]


def test_nix_defaults_to_the_checkout_holding_the_shim(machine: Machine, project: Path) -> None:
    machine.install("nix")
    linked = machine.root / "home" / "bin" / "lazy"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(SHIM)
    for shim in (SHIM, linked):
        finished = machine.run(project, "engine", shim=shim)
        assert finished.returncode == 0, finished.stderr
        assert machine.recorded()["args"][3:] == [str(CHECKOUT), "--", "engine"], shim


def test_a_copied_shim_runs_the_flake_found_walking_up(
    machine: Machine, project: Path, tmp_path: Path
) -> None:
    machine.install("nix")
    copy = tmp_path / "elsewhere" / "lazy"
    copy.parent.mkdir()
    shutil.copy(SHIM, copy)
    (project / "flake.nix").write_text("{ outputs = { self }: { }; }\n")
    finished = machine.run(project / "src" / "deep", "memory", "list", shim=copy)
    assert finished.returncode == 0, finished.stderr
    assert machine.recorded()["args"][3:] == [str(project), "--", "memory", "list"]


def test_podman_runs_the_image_with_the_data_directory(
    machine: Machine, project: Path, tmp_path: Path
) -> None:
    machine.install("nix", "podman", "docker")
    copy = tmp_path / "elsewhere" / "lazy"  # outside the checkout, so nix has no flake to run
    copy.parent.mkdir()
    shutil.copy(SHIM, copy)
    start = project / "src" / "deep"
    finished = machine.run(
        start,
        *AWKWARD,
        shim=copy,
        LAZY_ACTOR="me",
        LAZY_TOKEN="lzm_secret",
        ANTHROPIC_API_KEY="sk-secret",
    )
    assert finished.returncode == 0, finished.stderr
    called = machine.recorded()
    assert called["program"] == "podman"
    arguments = called["args"]
    data = project / ".lazy"
    assert data.is_dir(), "the data directory is created before it is mounted"
    user = "--userns=keep-id" if os.getuid() != 0 else f"--user={os.getuid()}:{os.getgid()}"
    fixed = ["run", "-i", "--rm", "--entrypoint", "lazy", user]
    fixed += ["-v", f"{data}:/data", "-e", "LAZY_DATA=/data"]
    fixed += ["-v", f"{project}:{project}", "-w", str(start)]
    assert arguments[: len(fixed)] == fixed
    passed = arguments[len(fixed) : -len(AWKWARD) - 1]
    assert sorted(zip(passed[::2], passed[1::2], strict=True)) == [
        ("-e", "ANTHROPIC_API_KEY"),
        ("-e", "LAZY_ACTOR"),
        ("-e", "LAZY_TOKEN"),
    ]
    assert arguments[-len(AWKWARD) - 1 :] == ["lazy-memory", *AWKWARD]
    assert "-t" not in arguments
    assert "--tty" not in arguments
    assert not [argument for argument in arguments if "secret" in argument]
    assert called["env"]["LAZY_TOKEN"] == "lzm_secret", "the value reaches podman by name"


def test_docker_with_lazy_data_and_lazy_image(machine: Machine, project: Path) -> None:
    machine.install("docker")
    finished = machine.run(
        project / "src", "engine", LAZY_DATA="../store", LAZY_IMAGE="registry.example/lazy:1"
    )
    assert finished.returncode == 0, finished.stderr
    called = machine.recorded()
    assert called["program"] == "docker"
    arguments = called["args"]
    user = f"--user={os.getuid()}:{os.getgid()}"
    assert arguments[:6] == ["run", "-i", "--rm", "--entrypoint", "lazy", user]
    assert ["-v", f"{project}/src/../store:/data"] == arguments[6:8]
    assert (project / "store").is_dir()
    assert "LAZY_DATA" not in arguments, "the host's LAZY_DATA is not passed into the container"
    assert arguments[-2:] == ["registry.example/lazy:1", "engine"]


def test_nothing_to_run_is_one_line_and_exit_127(machine: Machine, project: Path) -> None:
    finished = machine.run(project, "memory", "list")
    assert finished.returncode == 127
    assert finished.stdout == ""
    assert len(finished.stderr.splitlines()) == 1
    assert finished.stderr.startswith("lazy: lazy-memory is not installed here")
    assert not machine.record.exists()


def test_the_shim_runs_directly_by_its_shebang(machine: Machine, project: Path) -> None:
    machine.stand_in(project / ".venv" / "bin" / "lazy")
    finished = subprocess.run(
        [str(SHIM), "a b", ""],
        cwd=project,
        env=machine.environment(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    assert machine.recorded()["args"] == ["a b", ""]


def test_the_real_lazy_through_a_projects_venv(machine: Machine, project: Path) -> None:
    real = Path(sysconfig.get_path("scripts")) / "lazy"
    assert real.exists(), f"the lazy script is not installed at {real}"
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "lazy").symlink_to(real)
    body = 'Run `make deploy`; then check $STAGE.\nIt\'s "done" when green.'
    start = project / "src" / "deep"
    saved = machine.run(
        start, "memory", "save", "deploy-steps", "-t", "project", "-d", "How we deploy it"
    )
    assert saved.returncode == 0, saved.stderr
    updated = machine.run(start, "memory", "save", "deploy-steps", "--body", body)
    assert updated.returncode == 0, updated.stderr
    listed = machine.run(start, "memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)
    assert [(r["name"], r["type"], r["description"]) for r in records] == [
        ("deploy-steps", "project", "How we deploy it")
    ]
    shown = machine.run(start, "memory", "show", "deploy-steps", "--json")
    assert json.loads(shown.stdout)["body"] == body
    assert (project / ".lazy").is_dir(), "the store is the project's, found from a subfolder"


def test_shellcheck_finds_nothing() -> None:
    shellcheck = shutil.which("shellcheck")
    assert shellcheck is not None, "shellcheck is a test dependency: pip install -e '.[test]'"
    finished = subprocess.run(
        [shellcheck, "--shell=sh", str(SHIM)], capture_output=True, text=True, check=False
    )
    assert finished.returncode == 0, finished.stdout
