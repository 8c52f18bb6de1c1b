"""The built wheel: every module of the four source folders is in it, under lazy_memory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = {
    "engine": "lazy_memory/engine",
    "wire": "lazy_memory/wire",
    "adapters": "lazy_memory/adapters",
    "rpc": "lazy_memory/rpc",
}


def test_the_wheel_holds_every_module_and_the_console_script(tmp_path: Path) -> None:
    # A copy, so that no build/ folder left in the checkout by an earlier build fills gaps.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in SOURCE_FOLDERS:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("lazy_memory-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packed = set(archive.namelist())
        entry_points = next(name for name in packed if name.endswith("entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    expected = {
        f"{package}/{path.relative_to(ROOT / folder).as_posix()}"
        for folder, package in SOURCE_FOLDERS.items()
        for path in (ROOT / folder).rglob("*.py")
    }
    assert expected - packed == set(), "modules missing from the wheel"
    assert {f"{package}/py.typed" for package in SOURCE_FOLDERS.values()} <= packed
    assert "lazy = lazy_memory.rpc.cli:main" in scripts
