"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real `lazy engine`.

tests/e2e/nvim/plugin_spec.lua drives the plugin as a user would and writes what it saw as
JSON (tests/e2e/neovim_sessions.py runs it); these tests assert on it. Two sessions run side
by side, each in a project and store of its own: a builder's (everything the plugin does) and
an agent's (LAZY_TASK_ID set, so the engine must refuse its writes). Neovim is required: CI
installs Debian's package.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator

import pytest

from tests.e2e.neovim_sessions import (
    ERROR_LEVEL,
    WARNING,
    Session,
    by_line,
    cli,
    corrupt_store,
    nvim_binary,
    saved_store,
    sessions_of,
)

pytestmark = pytest.mark.nvim


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Session]]:
    """Run the builder's and the agent's Neovim at once (each ~5 s, mostly waiting)."""
    nvim_binary()
    store = saved_store(tmp_path_factory.mktemp("nvim-store"))
    builder_base = tmp_path_factory.mktemp("nvim-builder")
    agent_base = tmp_path_factory.mktemp("nvim-agent")
    with sessions_of(
        {
            "builder": (builder_base, store, {}),
            "agent": (agent_base, store, {"LAZY_TASK_ID": "task-42"}),
        }
    ) as sessions:
        yield sessions


@pytest.fixture(scope="module")
def unreadable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """A session on a store that cannot be read."""
    nvim_binary()
    store = corrupt_store(tmp_path_factory.mktemp("nvim-corrupt-store"))
    base = tmp_path_factory.mktemp("nvim-unreadable")
    with sessions_of({"unreadable": (base, store, {})}) as sessions:
        yield sessions["unreadable"]


@pytest.fixture
def builder(sessions: dict[str, Session]) -> Session:
    """The builder's session: the plugin's every feature."""
    return sessions["builder"]


@pytest.fixture
def agent(sessions: dict[str, Session]) -> Session:
    """The agent's session (LAZY_TASK_ID set): reads, and refused writes."""
    return sessions["agent"]


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


def test_an_unreadable_store_s_index_shows_the_engine_s_marker(unreadable: Session) -> None:
    recall = unreadable.step("recall")
    listed = unreadable.step("list")

    assert recall.get("err") is None
    answer = recall["result"]
    assert "records" not in answer  # null on the wire, nil in Lua: never an empty list
    assert answer["unavailable"].startswith("MEMORY INDEX UNAVAILABLE (")
    assert "memory.db: file is not a database" in answer["unavailable"]
    assert listed["lines"] == answer["unavailable"].rstrip("\n").split("\n")
    assert listed["shown"] is True
    assert unreadable.step("names")["names"] == []
    messages = unreadable.observations["messages"]
    assert not [line for line in messages if "E5108" in line], messages
