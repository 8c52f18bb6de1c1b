"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real `lazy engine`.

tests/e2e/nvim/plugin_spec.lua drives the plugin as a user would and writes what it saw as
JSON; these tests assert on it. Two sessions run side by side, each in a project and store of
its own: a builder's (everything the plugin does) and an agent's (LAZY_TASK_ID set, so the
engine must refuse its writes). Neovim is required: CI installs Debian's package.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.components import NEOVIM, require_program

pytestmark = pytest.mark.nvim

REPOSITORY = Path(__file__).resolve().parents[2]
PLUGIN = REPOSITORY / "editors" / "nvim"
SPEC = Path(__file__).resolve().parent / "nvim" / "plugin_spec.lua"
ENGINE = [sys.executable, "-m", "lazy_memory.rpc.cli", "engine"]
TIMEOUT_MS = 15000
START_TIMEOUT_MS = 60000  # the engine imports pygls: ~1-2 s, far more on a loaded machine
NVIM_SECONDS = 180
WARNING = 2  # LSP DiagnosticSeverity.Warning, which vim.diagnostic keeps as is
ERROR_LEVEL = 4  # vim.log.levels.ERROR

NOTES = """# Notes
Deploying: see memory:deploy-steps before you start.
Style rules live in [[style-guide]].
The plain style-guide word names a record too.
This one is gone: memory:no-such-record
This one was removed: memory:removed-record
Complete here: memory:
Link: [[
"""

RECORDS = [
    (
        "deploy-steps",
        "project",
        "How we deploy to staging",
        "Run `make deploy` from the repository root.\n\nThen watch the dashboard.",
    ),
    ("style-guide", "feedback", "Prefer small modules named for what they hold", "One docstring."),
    ("release-train", "project", "Releases are cut every second Tuesday", "Tag from main."),
]
REMOVED = ("removed-record", "user", "Gone soon", "x")


@dataclass
class Session:
    """One headless Neovim run: what it saw, and what to show when an assertion fails."""

    observations: dict[str, Any]
    data_dir: Path
    project: Path
    log: str

    def step(self, name: str) -> Any:
        """The observations of one step, failing with the run's log if it did not complete."""
        found = self.observations.get(name)
        if found is None or (isinstance(found, dict) and "error" in found):
            pytest.fail(f"step {name!r} failed: {found!r}\n{self.log}", pytrace=False)
        return found


def nvim_binary() -> str:
    """The Neovim to test with ($LAZY_NVIM, else nvim on PATH); missing skips, or fails in CI."""
    wanted = os.environ.get("LAZY_NVIM", "nvim")
    return require_program(
        wanted, NEOVIM, "apt-get install neovim, as .ci/run does, or set LAZY_NVIM to an nvim"
    )


def clean_environment(base: Path) -> dict[str, str]:
    """The runner's environment without any lazy identity or store, Neovim's state in base."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LAZY_")}
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        environment[variable] = str(base / variable.lower())
    return environment


def cli(project: Path, data_dir: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run the checkout's `lazy` command in the project, on its store, as a human."""
    return subprocess.run(
        [sys.executable, "-m", "lazy_memory.rpc.cli", *arguments],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**clean_environment(project.parent), "LAZY_DATA": str(data_dir)},
    )


def saved_store(base: Path) -> Path:
    """A store holding the records (one of them removed), saved with the CLI."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    data_dir = base / "data"
    for name, record_type, description, body in [*RECORDS, REMOVED]:
        save = ["memory", "save", name, "-t", record_type, "-d", description, "--body", body]
        cli(project, data_dir, *save)
    cli(project, data_dir, "memory", "rm", REMOVED[0])
    return data_dir


def prepare(base: Path, store: Path) -> tuple[Path, Path, Path]:
    """A project (a git root) with notes.md, and a copy of the store of its own."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    notes = project / "notes.md"
    notes.write_text(NOTES)
    data_dir = base / "data"
    shutil.copytree(store, data_dir)
    return project, notes, data_dir


def start(
    base: Path, store: Path, scenario: str, extra: dict[str, str]
) -> tuple[subprocess.Popen[str], Path]:
    """Start Neovim on the scenario; returns the process and where it writes its JSON."""
    project, notes, data_dir = prepare(base, store)
    output = base / "observations.json"
    spec = {
        "plugin_dir": str(PLUGIN),
        "cmd": ENGINE,
        "python": sys.executable,
        "data_dir": str(data_dir),
        "project": str(project),
        "notes": str(notes),
        "output": str(output),
        "scenario": scenario,
        "timeout_ms": TIMEOUT_MS,
        "start_timeout_ms": START_TIMEOUT_MS,
        "watchdog_ms": (NVIM_SECONDS - 10) * 1000,
    }
    spec_file = base / "spec.json"
    spec_file.write_text(json.dumps(spec))
    environment = {**clean_environment(base), "LAZY_NVIM_SPEC": str(spec_file), **extra}
    process = subprocess.Popen(
        [nvim_binary(), "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SPEC}"],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return process, output


def finish(process: subprocess.Popen[str], output: Path, base: Path) -> Session:
    """Wait for Neovim and read what it saw; a run that wrote nothing fails every test."""
    try:
        printed, _ = process.communicate(timeout=NVIM_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        printed, _ = process.communicate()
        pytest.fail(f"Neovim did not finish in {NVIM_SECONDS} s:\n{printed}", pytrace=False)
    logs = sorted(base.glob("xdg_*/**/lsp.log"))
    log = "\n".join(
        [f"nvim exit status {process.returncode}, output:\n{printed}"]
        + [f"--- {path}:\n{path.read_text()[-6000:]}" for path in logs]
    )
    if not output.exists():
        pytest.fail(f"Neovim wrote no observations.\n{log}", pytrace=False)
    observations = json.loads(output.read_text())
    if "fatal" in observations or process.returncode != 0:
        pytest.fail(f"the Neovim script failed: {observations.get('fatal')}\n{log}", pytrace=False)
    return Session(observations, base / "data", base / "project", log)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Session]]:
    """Run the builder's and the agent's Neovim at once (each ~5 s, mostly waiting)."""
    nvim_binary()
    store = saved_store(tmp_path_factory.mktemp("nvim-store"))
    builder_base = tmp_path_factory.mktemp("nvim-builder")
    agent_base = tmp_path_factory.mktemp("nvim-agent")
    builder = start(builder_base, store, "builder", {})
    agent = start(agent_base, store, "agent", {"LAZY_TASK_ID": "task-42"})
    try:
        yield {
            "builder": finish(*builder, builder_base),
            "agent": finish(*agent, agent_base),
        }
    finally:
        for process, _ in (builder, agent):
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture
def builder(sessions: dict[str, Session]) -> Session:
    """The builder's session: the plugin's every feature."""
    return sessions["builder"]


@pytest.fixture
def agent(sessions: dict[str, Session]) -> Session:
    """The agent's session (LAZY_TASK_ID set): reads, and refused writes."""
    return sessions["agent"]


def by_line(items: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Observations that carry a 0-based line, grouped by it."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        grouped.setdefault(item["line"], []).append(item)
    return grouped


def test_setup_attaches_one_client_per_project_to_the_buffer(builder: Session) -> None:
    attach = builder.step("attach")

    assert attach["attached"] is True
    assert attach["clients"] == ["lazy-memory"]
    assert attach["root_dir"] == str(builder.project)
    assert attach["buffer_root"] == str(builder.project)
    assert builder.step("end")["clients"] == ["lazy-memory"], "the commands started another"


def test_attached_buffers_get_completion_and_hover_keys(builder: Session) -> None:
    attach = builder.step("attach")

    assert attach["omnifunc"] == "v:lua.vim.lsp.omnifunc"
    if builder.observations["nvim_version"] < [0, 10]:
        assert attach["hover_key"] == "<Cmd>lua vim.lsp.buf.hover()<CR>"
    else:  # Neovim's own mapping, a Lua function
        assert attach["hover_key"].startswith("<Lua")


def test_neovim_reported_no_error_or_deprecation(sessions: dict[str, Session]) -> None:
    for session in sessions.values():
        messages = session.observations["messages"]
        assert not [line for line in messages if "E5108" in line or "rror" in line], messages
        assert not [line for line in messages if "deprecat" in line], messages


def test_custom_request_recall_through_the_client(builder: Session) -> None:
    recall = builder.step("recall")

    assert recall.get("err") is None
    names = [record["name"] for record in recall["index"]["records"]]
    assert names == ["deploy-steps", "release-train", "style-guide"]
    record = recall["record"]["record"]
    assert record["description"] == "How we deploy to staging"
    assert record["body"].startswith("Run `make deploy`")
    assert record["updated_by"]["kind"] == "human"


def test_hover_on_a_reference_shows_the_record(builder: Session) -> None:
    hover = builder.step("hover")

    assert hover.get("err") is None
    contents = hover["result"]["contents"]
    assert contents["kind"] == "markdown"
    for expected in ("deploy-steps", "project", "How we deploy to staging", "make deploy"):
        assert expected in contents["value"]
    shown = "\n".join(hover["shown"])
    assert "How we deploy to staging" in shown
    assert "Then watch the dashboard." in shown
    assert "Prefer small modules" in hover["bare"]["contents"]["value"]


def test_completion_after_memory_and_brackets_lists_record_names(builder: Session) -> None:
    completion = builder.step("completion")

    assert ":" in completion["trigger_characters"]
    assert "[" in completion["trigger_characters"]
    items = {item["label"]: item for item in completion["memory"]}
    assert sorted(items) == ["deploy-steps", "release-train", "style-guide"]
    assert items["deploy-steps"]["detail"] == "project"
    assert items["deploy-steps"]["documentation"] == "How we deploy to staging"
    links = {item["label"]: item for item in completion["link"]}
    assert sorted(links) == ["deploy-steps", "release-train", "style-guide"]
    assert links["style-guide"]["new_text"] == "style-guide]]"


def test_diagnostics_warn_about_unknown_and_removed_records(builder: Session) -> None:
    diagnostics = by_line(builder.step("diagnostics"))

    unknown, removed = diagnostics[4], diagnostics[5]
    assert [item["message"] for item in unknown] == ["no memory record named no-such-record"]
    assert [item["message"] for item in removed] == ["memory record removed-record was removed"]
    for item in (*unknown, *removed):
        assert item["severity"] == WARNING
        assert item["source"] == "lazy-memory"
    assert sorted(diagnostics) == [4, 5]


def test_descriptions_are_shown_inline(builder: Session) -> None:
    inline = by_line(builder.step("inline"))

    # Neovim shows inlay hints from 0.10; the engine offers older clients code lenses.
    expected_kind = "code_lens" if builder.observations["nvim_version"] < [0, 10] else "inlay_hint"
    assert sorted(inline) == [1, 2]
    assert all(item["kind"] == expected_kind for items in inline.values() for item in items)
    assert "How we deploy to staging" in inline[1][0]["text"]
    assert "Prefer small modules named for what they hold" in inline[2][0]["text"]


def test_list_command_shows_the_index_and_enter_opens_a_record(builder: Session) -> None:
    listed = builder.step("list")

    assert listed["lines"] == [
        "deploy-steps (project): How we deploy to staging",
        "release-train (project): Releases are cut every second Tuesday",
        "style-guide (feedback): Prefer small modules named for what they hold",
    ]
    assert listed["shown"] is True
    assert listed["modifiable"] is False
    assert listed["enter_opens"] == "deploy-steps"
    assert "Then watch the dashboard." in listed["enter_lines"]


def test_show_command_opens_the_read_only_record_document(builder: Session) -> None:
    show = builder.step("show")

    assert show["completion"] == ["deploy-steps"]
    assert show["buffer_name"].endswith("lazy-memory:deploy-steps")
    text = "\n".join(show["lines"])
    assert "How we deploy to staging" in text
    assert "Run `make deploy` from the repository root." in show["lines"]
    assert "Then watch the dashboard." in show["lines"]
    assert show["modifiable"] is False
    assert show["readonly"] is True
    assert show["buftype"] == "nofile"
    assert show["filetype"] == "markdown"
    assert show["attached"] is False
    assert show["under_cursor"] == "style-guide"
    assert "One docstring." in show["under_cursor_lines"]


def test_show_command_reports_an_unknown_record(builder: Session) -> None:
    show = builder.step("show")

    messages = [(note["message"], note["level"]) for note in show["unknown_notifications"]]
    assert len(messages) == 1
    message, level = messages[0]
    assert level == ERROR_LEVEL
    assert message.startswith("lazy-memory: ")
    assert "no-such-record" in message
    assert "NotFound" in message


def test_search_command_fills_the_quickfix_list_and_opens_the_hit(builder: Session) -> None:
    search = builder.step("search")

    assert search["title"] == "lazy-memory search: release"
    assert len(search["items"]) == 1
    item = search["items"][0]
    assert item["buffer_name"].endswith("lazy-memory:release-train")
    assert item["text"].startswith("release-train (project): Releases are cut every second Tuesday")
    assert search["selected_name"] == "release-train"
    assert "Tag from main." in search["selected_lines"]


def test_search_errors_and_empty_results_are_notified(builder: Session) -> None:
    search = builder.step("search")

    [bad] = search["bad_query_notifications"]
    assert bad["level"] == ERROR_LEVEL
    assert "elsewhere" in bad["message"]
    assert "InvalidQuery" in bad["message"]
    [none] = search["no_hit_notifications"]
    assert none["message"] == "lazy-memory: no record matches zebra"


def test_workspace_symbols_open_as_record_buffers(builder: Session) -> None:
    symbols = builder.step("symbols")

    assert symbols["uris"] == ["lazy-memory:deploy-steps"]
    assert symbols["opened"] == "deploy-steps"
    assert "Then watch the dashboard." in symbols["lines"]


def test_a_change_refreshes_diagnostics_lenses_and_open_records(builder: Session) -> None:
    changed = builder.step("changed")

    assert changed["answer"].get("err") is None
    assert changed["answer"]["result"]["name"] == "no-such-record"
    assert changed["heard"] is True
    assert {"name": "no-such-record", "operation": "save"}.items() <= changed["changes"][0].items()
    assert changed["diagnostic_cleared"] is True
    assert changed["inline_shown"] is True
    assert changed["record_buffer_reloaded"] is True, changed["record_buffer_lines"]
    history = json.loads(
        cli(
            builder.project, builder.data_dir, "memory", "history", "no-such-record", "--json"
        ).stdout
    )
    assert [(entry["actor"]["kind"], entry["actor"]["detail"]) for entry in history] == [
        ("human", getpass.getuser())
    ], "a save from Neovim is the person at the keyboard's, as from the CLI"


def test_an_agent_session_may_read_but_not_save(agent: Session) -> None:
    assert agent.step("attach")["attached"] is True
    assert agent.step("recall")["result"]["records"]

    save = agent.step("save")

    for answer in (save["answer"], save["raw"]):
        assert answer.get("result") is None
        assert answer["err"]["code"] == -32013
        assert answer["err"]["data"]["type"] == "PermissionDenied"
    [note] = save["notifications"]
    assert note["level"] == ERROR_LEVEL
    assert note["message"].startswith("lazy-memory: ")
    assert "(PermissionDenied)" in note["message"]
    listed = json.loads(cli(agent.project, agent.data_dir, "memory", "list", "--json").stdout)
    assert "agent-note" not in [record["name"] for record in listed]
