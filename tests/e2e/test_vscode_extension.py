"""The VS Code extension as CI builds it: npm ci, tsc, node's tests, and vsce's .vsix.

VS Code itself cannot be downloaded here, so what is checked is everything short of it: the
TypeScript compiles, the extension's pure modules pass their node tests, its wire helpers work
against the real engine started the way the extension starts it, and the packaged .vsix holds
the compiled extension, its runtime dependencies and the manifest that contributes the view,
the commands and the settings.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"
COMMANDS = {
    "lazyMemory.saveRecord",
    "lazyMemory.removeRecord",
    "lazyMemory.compact",
    "lazyMemory.doctor",
    "lazyMemory.showRecord",
    "lazyMemory.search",
    "lazyMemory.refresh",
}
SETTINGS = {
    "lazyMemory.engineCommand": ["lazy", "engine"],
    "lazyMemory.dataDirectory": "",
    "lazyMemory.actor": "",
}


def npm(*arguments: str, timeout: float = 120, **environment: str) -> str:
    """Run npm in the extension's folder; fail the test with its output if it fails."""
    executable = shutil.which("npm")
    if executable is None:
        if os.environ.get("LAZY_TEST_SKIP_VSCODE") == "1":
            pytest.skip("npm is not installed and LAZY_TEST_SKIP_VSCODE=1")
        pytest.fail("npm is not installed (apt-get install npm): it builds the VS Code extension")
    finished = subprocess.run(
        [executable, *arguments],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
            **environment,
        },
        timeout=timeout,
        check=False,
    )
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, f"npm {' '.join(arguments)} failed:\n{output}"
    return output


@pytest.fixture(scope="module")
def compiled() -> Path:
    """The extension's folder after `npm ci` (only when node_modules is missing) and tsc."""
    if not (EXTENSION / "node_modules").is_dir():
        npm("ci", timeout=600)
    npm("run", "compile", npm_config_offline="true")
    return EXTENSION


@pytest.fixture(scope="module")
def vsix(compiled: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """The packaged extension, built offline by vsce into a temporary folder."""
    target = tmp_path_factory.mktemp("vsix") / "lazy-memory.vsix"
    npm("run", "package", "--", "--out", str(target), npm_config_offline="true")
    with zipfile.ZipFile(target) as archive:
        yield archive


def manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The extension's package.json as packaged."""
    loaded: dict[str, Any] = json.loads(archive.read("extension/package.json"))
    return loaded


def test_vsix_contributes_the_view_commands_and_settings(vsix: zipfile.ZipFile) -> None:
    package = manifest(vsix)
    assert package["main"] == "./out/extension.js"
    assert "onStartupFinished" in package["activationEvents"]
    contributes = package["contributes"]
    assert {command["command"] for command in contributes["commands"]} == COMMANDS
    titles = {command["title"] for command in contributes["commands"]}
    assert {"Save Record", "Remove Record", "Compact", "Doctor", "Show Record", "Search"} <= titles
    assert {command["category"] for command in contributes["commands"]} == {"Lazy Memory"}
    assert contributes["views"]["explorer"] == [{"id": "lazyMemory.records", "name": "Lazy Memory"}]
    properties = contributes["configuration"]["properties"]
    assert {name: spec["default"] for name, spec in properties.items()} == SETTINGS
    context_menu = contributes["menus"]["view/item/context"]
    assert any(
        item["command"] == "lazyMemory.removeRecord"
        and "viewItem == lazyMemory.record" in item["when"]
        for item in context_menu
    ), "Remove Record is on the tree's context menu"
    menu_commands = {
        item["command"] for items in contributes["menus"].values() for item in items
    } | set(re.findall(r"command:([\w.]+)", json.dumps(contributes["viewsWelcome"])))
    assert menu_commands <= COMMANDS, "every menu entry names a contributed command"


def test_vsix_holds_the_compiled_extension_and_its_runtime_dependencies(
    vsix: zipfile.ZipFile,
) -> None:
    names = set(vsix.namelist())
    for module in ("extension", "client", "tree", "documents", "commands"):
        assert f"extension/out/{module}.js" in names
    extension = vsix.read("extension/out/extension.js").decode()
    assert "exports.activate = activate" in extension
    assert "exports.deactivate = deactivate" in extension
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert "extension/readme.md" in {name.lower() for name in names}
    assert not [
        name for name in names if name.startswith(("extension/src/", "extension/out/test/"))
    ]
    assert not [name for name in names if name.endswith((".ts", ".map"))]
    dev_only = ("typescript", "@vscode/vsce", "@types/")
    assert not [
        name
        for name in names
        if name.startswith(tuple(f"extension/node_modules/{d}" for d in dev_only))
    ], "development dependencies stay out of the vsix"


def test_engines_vscode_is_at_least_the_types_version(vsix: zipfile.ZipFile) -> None:
    engines = manifest(vsix)["engines"]["vscode"]
    types = json.loads((EXTENSION / "node_modules/@types/vscode/package.json").read_text())
    minimum = tuple(int(part) for part in re.findall(r"\d+", engines)[:3])
    assert minimum >= tuple(int(part) for part in types["version"].split(".")[:3])


def test_every_contributed_command_is_registered(compiled: Path) -> None:
    compiled_code = "".join(path.read_text() for path in (compiled / "out").glob("*.js"))
    for command in COMMANDS:
        assert f'command("{command}"' in compiled_code, f"{command} is never registered"


def test_node_tests_pass_against_the_real_engine(compiled: Path) -> None:
    engine = [sys.executable, "-m", "lazy_memory.rpc.cli", "engine"]
    output = npm("test", LAZY_TEST_ENGINE_COMMAND=json.dumps(engine), npm_config_offline="true")
    counts = dict(re.findall(r"^# (pass|fail|skipped|cancelled) (\d+)$", output, re.MULTILINE))
    assert counts == {"pass": counts["pass"], "fail": "0", "skipped": "0", "cancelled": "0"}, output
    assert int(counts["pass"]) >= 30, output
    assert re.search(r"^ok \d+ - the engine announces the commands", output, re.MULTILINE), output
