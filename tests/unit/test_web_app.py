"""The web view's ASGI app in process: headers, methods, escaping, and the token gate."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from lazy_memory.adapters import open_storage, service_factory
from lazy_memory.adapters.config import load_settings
from lazy_memory.adapters.polling import PollingFeed
from lazy_memory.adapters.tokens import TokenStore
from lazy_memory.engine.errors import PermissionDenied, StorageUnavailable
from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import RecordContent, RecordType
from lazy_memory.rpc.web.markup import CONTENT_SECURITY_POLICY
from tests.support.actors import BOB
from tests.support.components import missing

HOSTILE = "evil\x1b]0;owned\x07\u202eexe<script>alert(1)</script>"
Response = tuple[int, dict[str, list[str]], str]


@pytest.fixture(autouse=True)
def _web_extra() -> None:
    for module in ("starlette", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            missing("the web extra", f"{module} is not installed: pip install -e '.[test]'")


async def call(
    app: Any,
    method: str,
    target: str,
    headers: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
) -> Response:
    """One HTTP request straight into an ASGI app; (status, headers, text)."""
    path, _, query = target.partition("?")
    if not any(name.lower() == "host" for name, _ in headers):
        headers = [("host", "127.0.0.1:7412"), *headers]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 7412),
    }
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    found: dict[str, list[str]] = {}
    for name, value in start["headers"]:
        found.setdefault(name.decode().lower(), []).append(value.decode())
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], found, text.decode()


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    """A SQLite store holding a plain record and one whose every field is hostile."""
    opened = await open_storage(load_settings(tmp_path, {"LAZY_DATA": str(tmp_path / "data")}))
    for name, body in (("plain", "Plain body."), (HOSTILE, "<script>alert('body')</script>")):
        content = RecordContent(
            name=name, type=RecordType.PROJECT, description=f"about {name}", body=body
        )
        await opened.save_record(content, actor=BOB, at=_now())
    yield opened
    await opened.aclose()


def _now():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _app(storage: Storage, tmp_path: Path, outer: Sequence[Any] = ()) -> Any:
    from lazy_memory.rpc.web.app import WebView, build_app
    from lazy_memory.rpc.web.live import ChangeBroadcast
    from lazy_memory.rpc.web.serve import read_only_identity

    settings = load_settings(tmp_path, {"LAZY_DATA": str(tmp_path / "data")})
    service = service_factory(settings, storage)(read_only_identity())
    return build_app(WebView(service, ChangeBroadcast(PollingFeed(storage, 60))), outer)


@pytest.fixture
def app(storage: Storage, tmp_path: Path) -> Any:
    from starlette.middleware import Middleware

    from lazy_memory.rpc.web.auth import LoopbackHost

    return _app(storage, tmp_path, [Middleware(LoopbackHost)])


@pytest.mark.parametrize(
    "target",
    [
        "/",
        "/?role=agent",
        "/?role=nobody",
        "/record?name=plain",
        "/record?name=missing",
        "/record",
        "/search?q=plain",
        '/search?q="unclosed',
        "/compact",
        "/doctor",
        "/static/live.js",
        "/no-such-page",
    ],
)
async def test_every_response_carries_the_security_headers(app: Any, target: str) -> None:
    _, headers, _ = await call(app, "GET", target)
    assert headers["content-security-policy"] == [CONTENT_SECURITY_POLICY]
    assert headers["x-content-type-options"] == ["nosniff"]
    assert headers["x-frame-options"] == ["DENY"]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("target", ["/", "/record?name=plain", "/search", "/compact", "/doctor"])
async def test_nothing_can_be_written(app: Any, method: str, target: str) -> None:
    status, headers, _ = await call(app, method, target)
    assert status == 405
    assert headers["content-security-policy"] == [CONTENT_SECURITY_POLICY]


async def test_the_service_behind_the_view_refuses_writes(storage: Storage, tmp_path: Path) -> None:
    from lazy_memory.rpc.web.serve import read_only_identity

    settings = load_settings(tmp_path, {"LAZY_DATA": str(tmp_path / "data")})
    service = service_factory(settings, storage)(read_only_identity())
    with pytest.raises(PermissionDenied):
        await service.remove("plain")


async def test_a_hostile_record_is_escaped_through_the_app(app: Any) -> None:
    from urllib.parse import quote

    for target in (
        f"/record?name={quote(HOSTILE)}",
        f"/record?quoted={quote(quote(HOSTILE, safe=''))}",
        "/",
        "/search?q=evil",
    ):
        status, _, text = await call(app, "GET", target)
        assert status == 200, target
        assert "\x1b" not in text
        assert "\u202e" not in text
        assert "<script>alert" not in text
        assert r"evil\x1b]0;owned\x07\u202eexe&lt;script&gt;" in text


async def test_a_foreign_host_header_is_refused(app: Any) -> None:
    status, _, _ = await call(app, "GET", "/", [("host", "attacker.example:7412")])
    assert status == 421
    assert (await call(app, "GET", "/", [("host", "localhost:7412")]))[0] == 200
    assert (await call(app, "GET", "/", [("host", "[::1]:7412")]))[0] == 200


async def test_an_unreadable_store_shows_the_marker(tmp_path: Path) -> None:
    from lazy_memory.adapters.reopening import reopening_store

    malformed = StorageUnavailable("the database disk image is malformed")

    async def broken() -> Storage:
        raise malformed

    status, _, text = await call(_app(reopening_store(broken, malformed), tmp_path), "GET", "/")
    assert status == 200
    assert "MEMORY INDEX UNAVAILABLE (the database disk image is malformed)" in text


@pytest.fixture
def tokens(tmp_path: Path) -> TokenStore:
    return TokenStore.in_data_dir(tmp_path / "data")


@pytest.fixture
def gated(storage: Storage, tmp_path: Path, tokens: TokenStore) -> Any:
    from starlette.middleware import Middleware

    from lazy_memory.rpc.web.auth import TokenGate

    return _app(storage, tmp_path, [Middleware(TokenGate, tokens=tokens, secure_cookie=True)])


async def test_off_the_loopback_a_request_needs_a_token(gated: Any) -> None:
    status, headers, _ = await call(gated, "GET", "/")
    assert status == 401
    assert headers["www-authenticate"] == ['Bearer realm="lazy web"']
    assert headers["content-security-policy"] == [CONTENT_SECURITY_POLICY]
    status, headers, _ = await call(gated, "GET", "/", [("accept", "text/html")])
    assert (status, headers["location"]) == (303, ["/login"])
    assert (await call(gated, "GET", "/", [("authorization", "Bearer lzm_wrong")]))[0] == 401


@pytest.mark.parametrize(("role", "status"), [("human", 200), ("builder", 200), ("engine", 403)])
async def test_only_human_and_builder_tokens_open_it(
    gated: Any, tokens: TokenStore, role: str, status: int
) -> None:
    _, secret = tokens.add(role)
    assert (await call(gated, "GET", "/", [("authorization", f"Bearer {secret}")]))[0] == status


async def test_an_agent_token_is_refused(gated: Any, tokens: TokenStore) -> None:
    _, secret = tokens.add("agent", task="t1")
    status, _, text = await call(gated, "GET", "/doctor", [("authorization", f"Bearer {secret}")])
    assert status == 403
    assert "role agent" in text


async def test_the_login_form_sets_a_strict_http_only_cookie(
    gated: Any, tokens: TokenStore
) -> None:
    info, secret = tokens.add("human")
    form = [("content-type", "application/x-www-form-urlencoded")]
    assert (await call(gated, "GET", "/login"))[0] == 200
    assert (await call(gated, "POST", "/login", form, b"token=lzm_wrong"))[0] == 401
    status, headers, _ = await call(gated, "POST", "/login", form, f"token={secret}".encode())
    assert status == 303
    (cookie,) = headers["set-cookie"]
    assert secret not in cookie
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert {"httponly", "samesite=strict", "secure", "path=/"} <= flags
    session = cookie.split(";", 1)[0]
    assert (await call(gated, "GET", "/", [("cookie", session)]))[0] == 200
    tokens.revoke(info.id)
    assert (await call(gated, "GET", "/", [("cookie", session)]))[0] == 401
