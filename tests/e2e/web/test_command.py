"""`lazy web` as a process: where it refuses to start, and what it says."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import Lazy
from tests.e2e.web.conftest import WebServer, start_web, stop


def _refused(project: Path, *arguments: str) -> str:
    process, said = start_web(project, *arguments)
    stop(process)
    assert process.returncode not in (0, None), said
    lines = said.strip().splitlines()
    assert len(lines) == 1, said
    return lines[0]


def test_a_non_loopback_address_without_tls_is_refused(project: Path) -> None:
    said = _refused(project, "--listen", "0.0.0.0:0")
    assert "without TLS" in said
    assert "--insecure-http" in said


def test_a_non_loopback_address_needs_a_human_or_builder_token(project: Path, lazy: Lazy) -> None:
    said = _refused(project, "--listen", "0.0.0.0:0", "--insecure-http")
    assert "lazy engine token add --role human" in said
    assert lazy("engine", "token", "add", "--role", "agent", "--task", "t1").returncode == 0
    assert "needs a human or builder token" in _refused(
        project, "--listen", "0.0.0.0:0", "--insecure-http"
    )


def test_with_a_token_it_serves_only_requests_that_present_it(project: Path, lazy: Lazy) -> None:
    added = lazy("engine", "token", "add", "--role", "builder", "--json")
    secret = json.loads(added.stdout)["secret"]
    process, said = start_web(project, "--listen", "0.0.0.0:0", "--insecure-http")
    try:
        port = said.rsplit(":", 1)[1].split("/")[0]
        url = f"http://127.0.0.1:{port}/doctor"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code == 401
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {secret}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
            assert "Injected memory" in answer.read().decode()
    finally:
        stop(process)


def test_it_stops_promptly_with_a_page_listening(web: WebServer) -> None:
    events = urllib.request.urlopen(web.at("/events"), timeout=10)
    try:
        assert events.readline() == b"retry: 2000\n"
        asked = time.monotonic()
        stop(web.process)
        assert web.process.returncode == 0
        assert time.monotonic() - asked < 3
    finally:
        events.close()


def test_without_the_extra_it_says_how_to_install_it(project: Path) -> None:
    blocked = (
        "import sys; sys.modules['starlette'] = None; "
        "from lazy_memory.rpc.cli import main; sys.exit(main(['web']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr == (
        "lazy: error: `lazy web` needs starlette: pip install 'lazy-memory[web]'\n"
    )


def test_the_parser_imports_no_web_framework() -> None:
    probe = (
        "import sys; from lazy_memory.rpc.cli import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'uvicorn')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
