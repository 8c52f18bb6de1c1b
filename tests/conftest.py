"""Fixtures for every test: each test gets its own data directory and a clean identity, and
no test reaches the real Anthropic API. Those more than one tier asks for: the fake Messages
API (`fake_anthropic`), the session's PostgreSQL server (`postgres_server`), and a fresh store
of each backend (`backend`, `settings`: the conformance suite and the crash test).

Also the component markers (tests/support/components.py): each test that needs PostgreSQL, root or
Chromium is marked here, from what it uses, so `-m 'not postgres and not root and not chromium'`
leaves it out.

And how the suite is spread over pytest-xdist's workers (`-n auto --dist loadgroup`, from
pyproject.toml; `-n 0` runs it in this process, for debugging): the `serial` tests (SERIAL),
the machine-wide ones and those that need root run on one worker, one after another, never
beside another of them; the tests of a module that share a module-scoped fixture (a built
extension, a browser, an engine) run on one worker, so it is built once; every other test
goes to whichever worker is free. The reliability figures the workers record are printed
once, by the controller (tests/reliability/figures.py).
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters import BACKENDS
from lazy_memory.adapters.config import Settings
from tests.reliability.figures import FIGURES, WORKER_OUTPUT, write_figures
from tests.support.components import CHROMIUM, POSTGRES, ROOT, missing
from tests.support.fake_anthropic import FAKE_API_KEY, UNREACHABLE_BASE_URL, FakeAnthropic
from tests.support.postgres import PostgresServer, postgres_binaries, start_cluster
from tests.support.stores import store_environment, store_settings

_ISOLATED_VARIABLES = (
    "LAZY_DATA",
    "LAZY_STORAGE",
    "LAZY_ACTOR",
    "LAZY_TASK_ID",
    "LAZY_PG_DSN",
    "LAZY_PROJECT",
    "LAZY_REMOTE",
    "LAZY_TOKEN",
    "LAZY_TLS_CA",
    "LAZY_OFFLINE",
    "LAZY_CONNECT_TIMEOUT",
    "LAZY_POLL_SECONDS",
    "LAZY_LAUNCHED",
    "LAZY_ROLE",
    "LAZY_EDITOR",
    # The width tables fit (rpc/cli/table.py): pytest-xdist sets it to 80 in its workers, so
    # a test's output would depend on how the suite was started.
    "COLUMNS",
)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point LAZY_DATA at a fresh folder and drop any identity (or width) the test runner
    inherited."""
    for variable in _ISOLATED_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    data_dir = tmp_path / "lazy-data"
    monkeypatch.setenv("LAZY_DATA", str(data_dir))
    return data_dir


_ROOT_FIXTURES = frozenset({"mounted_data_dir"})
_ROOT_CALLS = frozenset({"small_tmpfs", "read_only_view", "require_root", "mknod"})
"""What a test calls that needs root: tmpfs and bind mounts, chown to others, device nodes."""

_BROWSER_FIXTURES = frozenset({"browser"})
"""Headless Chromium (tests/e2e/web/conftest.py), which every browser test's page comes from."""


SERIAL = frozenset(
    {
        "tests/reliability/test_load.py",  # runs for a fixed time; RSS must stay flat
        "tests/reliability/test_crash.py",  # writers are SIGKILLed after a timed, random while
        "tests/e2e/test_daemon_limits.py",  # timeouts timed to half a second; RSS
        "tests/e2e/daemon/test_front_door.py",  # a token holder's 0.1 s of grace in a crowd
        "tests/e2e/test_network_timeouts.py",  # connect timeouts of a second; stops the PostgreSQL
        "tests/e2e/test_postgres_server_faults.py",  # a 0.5 s statement timeout; stops PostgreSQL
        "tests/e2e/test_postgres.py",  # a restart races the change feed's last notification
        "tests/e2e/test_sigterm.py",  # every server must exit within a second of SIGTERM
        # a hook that waits on a lock, a mute store or a hung file system ends within seconds
        "tests/e2e/test_launch_hook.py::test_a_store_that_accepts_and_never_answers",
        "tests/e2e/test_launch_hook.py::test_a_store_whose_write_lock_is_held_prints_its_index",
        "tests/e2e/test_launch_hook.py::test_a_store_that_hangs_the_light_render_gives_the_marker_in_time",
        "tests/e2e/web/test_command.py",  # the server must stop within 3 s of SIGTERM
        # reads beside a held lock must answer within 1.5 s
        "tests/unit/test_store_reads.py::test_reads_do_not_wait_for_another_process_holding_the_write_lock",
        # a save waits out a lock of 0.5 s, and one of 1 s past a busy timeout of 0.2 s fails
        "tests/unit/test_sqlite_storage.py::test_a_save_waits_out_another_writer_without_blocking_the_event_loop",
        "tests/unit/test_sqlite_storage.py::test_a_lock_held_past_the_busy_timeout_fails_the_save_and_writes_nothing",
        # a hanging API times out within 2 s; a command killed at 1 s has started its child
        "tests/unit/test_summarizers.py::test_a_hanging_api_times_out_within_the_setting_whatever_the_retries",
        "tests/unit/test_summarizers.py::test_a_hanging_command_is_killed_with_what_it_started",
    }
)
"""The modules, or single tests (`module::function`, every parameter of it), marked `serial`,
and why: each times itself against a bound that a busy machine can push it past. `.ci/run`
runs them in a pass of their own, one at a time (`-m serial -n 0`), as the suite ran before it
had workers; the rest run on every core (`-m 'not serial'`). A module is named whole only
when most of its tests are timed; otherwise its timed tests are named one by one."""

FIRST = (
    "tests/unit/test_bench_smoke.py::",  # 103 s, 34 s, 18 s, 17 s
    "tests/e2e/test_light_hook.py::test_the_states_say_what_they_promise",  # 4 of 10-15 s
    "tests/e2e/test_names_every_way_in.py::test_the_command_line_saves_every_legal_name_and_refuses_every",
    "tests/e2e/test_imported_records.py::test_every_real_world_name_is_edited_removed_and",
    "tests/e2e/test_launch_cache.py::test_settings_and_roles_render_anew",  # 2 of 12 s
)
"""The beginnings of the node ids of the suite's longest tests (10 s to 100 s each on this
2-core machine, in CI's run), longest first: the workers get them before every other test
but the groups (xdist's loadgroup hands out the groups of tests that share a worker first,
largest first), so that a pass never ends waiting on one of them while the other worker has
nothing left to do. Only the balance depends on it: a test renamed away is handed out in its
place among the others, and should be named here again."""

MACHINE_WIDE = frozenset({"tests/unit/test_sqlite_reads.py"})  # reads /proc/locks
"""Modules that use what the whole machine shares, as the tests that need root do (tmpfs and
bind mounts, devices, other users' files)."""

EXCLUSIVE = "exclusive"
"""The xdist group of the `serial`, machine-wide and root tests: one worker runs them one after
another, so none of them runs beside another."""

_SHARED_SCOPES = frozenset({"class", "module", "package"})


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # optional: xdist may be absent
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """No workers for a pytest that a test runs (tests/unit/test_components.py): it runs in
    its own process, inside the worker that runs that test. Otherwise xdist's own count: the
    machine's cores, or $PYTEST_XDIST_AUTO_NUM_WORKERS."""
    return 0 if "PYTEST_CURRENT_TEST" in os.environ else None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A worker is done: take the reliability figures it recorded, if any."""
    FIGURES.merge(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT, {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The reliability figures: this process's, or under xdist every worker's."""
    write_figures(terminalreporter)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that need PostgreSQL (its fixture, or a `postgres` backend parameter),
    those that need root (a root fixture, or a call of a root helper in the test) and those
    that need Chromium (the browser fixture); and give each test its xdist group (this
    module's docstring)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        parameters = set(map(str, callspec.params.values())) if callspec is not None else set()
        if "postgres_server" in fixtures or POSTGRES in parameters:
            item.add_marker(POSTGRES)
        function = getattr(item, "function", None)
        called = set(inspect.unwrap(function).__code__.co_names) if function else set()
        if fixtures & _ROOT_FIXTURES or called & _ROOT_CALLS:
            item.add_marker(ROOT)
        if fixtures & _BROWSER_FIXTURES:
            item.add_marker(CHROMIUM)
        module = item.nodeid.split("::", 1)[0]
        serial = not SERIAL.isdisjoint(_names(item))
        if serial:
            item.add_marker(pytest.mark.serial)
        group = _xdist_group(item, module, serial)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_handed_out)
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS:
        _check_listed(items)


def _names(item: pytest.Item) -> tuple[str, str]:
    """What SERIAL may call the test: its module, or its module and function."""
    module = item.nodeid.split("::", 1)[0]
    return module, f"{module}::{getattr(item, 'originalname', item.name)}"


def _handed_out(item: pytest.Item) -> int:
    """Where the test goes in the order the workers are given tests: FIRST's, then the rest."""
    return next(
        (rank for rank, first in enumerate(FIRST) if item.nodeid.startswith(first)), len(FIRST)
    )


def _xdist_group(item: pytest.Item, module: str, serial: bool) -> str | None:
    """EXCLUSIVE, the module's path when a fixture of the test is shared across the module, or
    None: the test goes to any free worker."""
    if serial or module in MACHINE_WIDE or item.get_closest_marker(ROOT) is not None:
        return EXCLUSIVE
    definitions = getattr(item, "_fixtureinfo", None)
    for defined in definitions.name2fixturedefs.values() if definitions else ():
        if defined and defined[-1].scope in _SHARED_SCOPES:
            return module
    return None


def _check_listed(items: list[pytest.Item]) -> None:
    """Refuse a whole-suite run in which a module or test that SERIAL or MACHINE_WIDE names
    is missing (moved or renamed): its tests would run beside others, and `-m serial` could
    run none."""
    names = {name for item in items for name in _names(item)}
    if stale := sorted((SERIAL | MACHINE_WIDE) - names):
        raise pytest.UsageError(f"tests/conftest.py names modules or tests with none: {stale}")


@pytest.fixture(autouse=True)
def no_real_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test off the real API: no credential, and an endpoint where nothing listens."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE_BASE_URL)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake server, with ANTHROPIC_BASE_URL and a fake ANTHROPIC_API_KEY set."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_API_KEY)
        yield fake


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session, stopped and deleted at its end."""
    binaries = postgres_binaries()
    if binaries is None:
        missing(POSTGRES, "no PostgreSQL server binaries (Debian: apt-get install postgresql)")
    # Not under pytest's tmp_path: its folders are private to root, and the server runs as
    # the postgres user, which must reach its own directory.
    directory = Path(tempfile.mkdtemp(prefix="lazy-postgres-"))
    try:
        server = start_cluster(binaries, directory)
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend under test; also exported as LAZY_STORAGE for writer subprocesses."""
    name: str = request.param
    monkeypatch.setenv("LAZY_STORAGE", name)
    return name


@pytest.fixture
def settings(
    request: pytest.FixtureRequest,
    backend: str,
    isolated_environment: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Settings]:
    """Settings for a fresh, empty store of the backend under test (tests/support/stores.py).

    The environment writer subprocesses inherit points at it too.
    """
    with store_settings(backend, tmp_path, isolated_environment, request, "conformance") as opened:
        for variable, value in store_environment(opened).items():
            monkeypatch.setenv(variable, value)
        yield opened
