"""A real `lazy web` process on a temporary store, and headless Chromium to drive it.

The store is seeded with the real CLI; the server runs as a user runs it, on a free loopback
port, polling for other processes' writes quickly so a test sees them within a second.
Chromium is Debian's (`.ci/run` installs it), driven by Playwright: without either the tests
skip here and fail under CI (tests/support/components.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Lazy
from tests.support.components import CHROMIUM as BROWSER
from tests.support.components import missing

CHROMIUM = Path("/usr/bin/chromium")
_SERVING = re.compile(r"lazy web: serving (\S+) ")
_START_SECONDS = 20


@dataclass(frozen=True)
class WebServer:
    """A running `lazy web`: its address and its process."""

    url: str
    process: subprocess.Popen[str]

    def at(self, path: str) -> str:
        """The full address of path on this server."""
        return self.url.rstrip("/") + path


def start_web(project: Path, *arguments: str) -> tuple[subprocess.Popen[str], str]:
    """Start `lazy web ARGUMENTS` in project; the process and the line it announced itself with.

    If it exits instead, the process (finished) and its whole standard error.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "lazy_memory.rpc.cli", "web", *arguments],
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LAZY_POLL_SECONDS": "0.2"},
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    if not line:
        process.wait(_START_SECONDS)
        return process, process.stderr.read()
    # The rest of its standard error is drained, so a chatty log can never block it.
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, line


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a server as SIGTERM does, and wait for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


SCRIPT_BODY = (
    "<script>window.__pwned = 'script'</script>\n"
    '<img src="x" onerror="window.__pwned = \'img\'">\n'
    "<a href=\"javascript:window.__pwned='link'\">click</a>"
)
"""A body that would run script three ways if a page ever put it in unescaped."""


@pytest.fixture
def seeded(lazy: Lazy) -> Lazy:
    """The store the browser tests read, written with the real CLI before the server starts.

    deploy-steps: created, updated, removed, revived (revisions 1-4); xss-probe: a body of
    HTML that would run script; style: a feedback record.
    """
    writes = [
        ("save", "deploy-steps", "-t", "project", "-d", "How we deploy", "--body", "Run make."),
        ("save", "deploy-steps", "--body", "Run make deploy.\nThen watch the dashboard."),
        ("rm", "deploy-steps"),
        ("save", "deploy-steps", "-d", "How we deploy, again", "--body", "Run the pipeline."),
        ("save", "xss-probe", "-t", "reference", "-d", "<b>not bold</b>", "--body", SCRIPT_BODY),
        ("save", "style", "-t", "feedback", "-d", "Prefer small modules", "--body", "Small."),
    ]
    for write in writes:
        done = lazy("memory", *write)
        assert done.returncode == 0, done.stderr
    return lazy


@pytest.fixture
def web(project: Path, seeded: Lazy) -> Iterator[WebServer]:
    """`lazy web` on a free loopback port, serving the project's seeded store."""
    process, line = start_web(project, "--listen", "127.0.0.1:0")
    found = _SERVING.search(line)
    if found is None:
        stop(process)
        pytest.fail(f"lazy web did not start: {line}")
    try:
        yield WebServer(found.group(1), process)
    finally:
        stop(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (the system's), through Playwright's synchronous API.

    Module-scoped, not session-scoped: while Playwright's synchronous API is open its event
    loop counts as running in this thread, so any asyncio test run meanwhile would fail.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing(BROWSER, "Playwright is not installed: pip install -e '.[test]'")
    if not CHROMIUM.exists():
        missing(BROWSER, f"{CHROMIUM} is missing: apt-get install chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page that fails the test on any script error or dialog."""
    context = browser.new_context()
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    try:
        yield tab
    finally:
        context.close()
    assert not errors, errors
