"""The VS Code extension as CI builds it: npm ci, tsc, esbuild, node's tests, and vsce's .vsix.

VS Code itself cannot be downloaded here, so what is checked is everything short of it: the
TypeScript compiles, the extension's pure modules pass their node tests, its wire helpers work
against the real engine started the way the extension starts it, the packaged .vsix holds the
extension bundled with its runtime dependencies, its LICENSE and the manifest that contributes
the view, the commands and the settings, vsce packages it without a warning, and the
manifest's activation events (read the way VS Code reads them) leave other workspaces alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.components import NODE, require_program

pytestmark = pytest.mark.node

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
}
STORE_MARKERS = ("lazy.toml", ".lazy")
"""What makes a workspace one the extension activates in, at the workspace folder's root."""


def npm(*arguments: str, timeout: float = 120, **environment: str) -> str:
    """Run npm in the extension's folder; fail the test with its output if it fails."""
    executable = require_program("npm", NODE, "apt-get install npm: it builds the extension")
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


def installed_as_locked() -> bool:
    """Whether node_modules holds every package package-lock.json names (else `npm ci`)."""
    installed = EXTENSION / "node_modules" / ".package-lock.json"
    if not installed.exists():
        return False
    locked = json.loads((EXTENSION / "package-lock.json").read_text())["packages"]
    present = json.loads(installed.read_text())["packages"]
    return all(name in present for name in locked if name)


@pytest.fixture(scope="module")
def compiled() -> Path:
    """The extension's folder after `npm ci` (only when node_modules is stale), tsc, esbuild."""
    if not installed_as_locked():
        npm("ci", timeout=600)
    npm("run", "compile", npm_config_offline="true")
    return EXTENSION


@pytest.fixture(scope="module")
def packaging(compiled: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The extension packaged offline by vsce into a temporary folder, and what vsce printed."""
    target = tmp_path_factory.mktemp("vsix") / "lazy-memory.vsix"
    output = npm("run", "package", "--", "--out", str(target), npm_config_offline="true")
    return target, output


@pytest.fixture(scope="module")
def vsix(packaging: tuple[Path, str]) -> Iterator[zipfile.ZipFile]:
    """The packaged extension."""
    with zipfile.ZipFile(packaging[0]) as archive:
        yield archive


def activates_at_startup(package: dict[str, Any], workspace: Path) -> bool:
    """Whether VS Code (1.74 or later) activates the extension when it opens workspace.

    As VS Code decides it: `*` and `onStartupFinished` always; `workspaceContains:PATH` when
    the folder holds PATH (a file or a folder); and, implied by the manifest since 1.74,
    `onView` for a contributed view without a `when` clause, as the Explorer shows it at once.
    Commands (`onCommand`, implied too) activate only when someone runs one.
    """
    for event in package.get("activationEvents", []):
        if event in ("*", "onStartupFinished"):
            return True
        contained = event.removeprefix("workspaceContains:")
        if contained != event and (workspace / contained).exists():
            return True
    views = package["contributes"].get("views", {})
    return any("when" not in view for container in views.values() for view in container)


def manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The extension's package.json as packaged."""
    loaded: dict[str, Any] = json.loads(archive.read("extension/package.json"))
    return loaded


def test_vsix_contributes_the_view_commands_and_settings(vsix: zipfile.ZipFile) -> None:
    package = manifest(vsix)
    assert package["main"] == "./dist/extension.js"
    contributes = package["contributes"]
    assert {command["command"] for command in contributes["commands"]} == COMMANDS
    titles = {command["title"] for command in contributes["commands"]}
    assert {"Save Record", "Remove Record", "Compact", "Doctor", "Show Record", "Search"} <= titles
    assert {command["category"] for command in contributes["commands"]} == {"Lazy Memory"}
    [view] = contributes["views"]["explorer"]
    assert (view["id"], view["name"]) == ("lazyMemory.records", "Lazy Memory")
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


def test_vsix_holds_the_bundled_extension_its_license_and_nothing_else(
    vsix: zipfile.ZipFile,
) -> None:
    names = set(vsix.namelist())
    assert {"extension/dist/extension.js", "extension/package.json"} <= names
    assert "extension/readme.md" in {name.lower() for name in names}
    [license_file] = [name for name in names if name.lower().startswith("extension/license")]
    assert vsix.read(license_file).decode().startswith("MIT License")
    bundle = vsix.read("extension/dist/extension.js").decode()
    assert re.search(r"activate: \(\) => activate,\s+deactivate: \(\) => deactivate", bundle)
    # vscode-languageclient and what it needs are inside the bundle; only vscode is left out.
    assert "var BaseLanguageClient = class" in bundle
    assert "Content-Length" in bundle, "vscode-jsonrpc's framing is bundled"
    assert 'require("vscode")' in bundle
    assert not [name for name in names if name.startswith("extension/node_modules/")]
    assert not [name for name in names if name.startswith(("extension/src/", "extension/out/"))]
    assert not [name for name in names if name.endswith((".ts", ".map"))]


def test_vsce_packages_without_a_warning(packaging: tuple[Path, str]) -> None:
    output = packaging[1]
    assert "WARNING" not in output, output
    assert (
        "--skip-license"
        not in json.loads((EXTENSION / "package.json").read_text())["scripts"]["package"]
    )
    assert re.search(r"DONE\s+Packaged: .*\(\d+ files", output), output


def test_the_license_is_the_projects(compiled: Path) -> None:
    pyproject = (EXTENSION.parents[1] / "pyproject.toml").read_text()
    assert 'license = { text = "MIT" }' in pyproject
    assert json.loads((compiled / "package.json").read_text())["license"] == "MIT"
    assert (compiled / "LICENSE").read_text().startswith("MIT License")


def test_a_workspace_without_a_store_does_not_activate_the_extension(
    vsix: zipfile.ZipFile, tmp_path: Path
) -> None:
    package = manifest(vsix)
    bare, git_only = tmp_path / "bare", tmp_path / "git-only"
    (git_only / ".git").mkdir(parents=True)
    bare.mkdir()

    assert not activates_at_startup(package, bare)
    assert not activates_at_startup(package, git_only)
    assert list(bare.iterdir()) == []


@pytest.mark.parametrize("marker", STORE_MARKERS)
def test_a_workspace_with_a_store_activates_the_extension(
    vsix: zipfile.ZipFile, tmp_path: Path, marker: str
) -> None:
    package = manifest(vsix)
    if marker == ".lazy":
        (tmp_path / marker).mkdir()
    else:
        (tmp_path / marker).write_text("")

    assert activates_at_startup(package, tmp_path)


def test_the_hidden_view_is_shown_once_the_extension_activates(compiled: Path) -> None:
    # The view's `when` names the context key activate() sets: after an explicit command in a
    # workspace without a store, the view appears; before, it activates nothing.
    [view] = json.loads((compiled / "package.json").read_text())["contributes"]["views"]["explorer"]
    extension = (compiled / "out" / "extension.js").read_text()
    assert f'"setContext", "{view["when"]}", true' in extension


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
