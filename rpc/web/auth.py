"""Who may open the web view: the listening rules, and the token gate off the loopback.

On a loopback address the view is as open as the store's files are to the local user, and
only the Host header is checked, so that a web page elsewhere cannot reach it by rebinding a
name of its own to 127.0.0.1. On any other address every request needs a daemon token
(adapters/tokens.py) of role human or builder, presented as `Authorization: Bearer SECRET` or
through the login form, which keeps the secret in this process's memory and gives the browser
only a random session id (an HttpOnly, SameSite=Strict cookie). Each request checks the
secret against the token file again, so a revoked token is refused at once. Without TLS such
an address is refused unless `--insecure-http` says the clear text is intended (listen.py).
"""

from __future__ import annotations

import secrets
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lazy_memory.adapters.tokens import TokenInfo, TokenRole, TokenStore
from lazy_memory.engine.errors import LazyMemoryError
from lazy_memory.engine.visible import visible_line
from lazy_memory.rpc.usage import UsageError
from lazy_memory.rpc.web.listen import is_loopback
from lazy_memory.rpc.web.markup import line, page

ALLOWED_ROLES = frozenset({TokenRole.HUMAN, TokenRole.BUILDER})
"""The token roles that may open the view: people and builders, not agents or engines."""
SESSION_COOKIE = "lazy_web_session"
MAX_SESSIONS = 1_000
"""Logged-in browsers remembered at once; the oldest is forgotten first."""
_MAX_LOGIN_BYTES = 4_096
_OPEN_PATHS = ("/login", "/static/")


def require_login_token(tokens: TokenStore) -> None:
    """Refuse to serve a non-loopback address that no token could open."""
    tokens.require_private()
    if not any(token.role in ALLOWED_ROLES for token in tokens.list()):
        raise UsageError(
            "off the loopback interface the web view needs a human or builder token, and there "
            "is none: create one with `lazy engine token add --role human`"
        )


class LoopbackHost:
    """Refuse requests whose Host is not a loopback name: DNS rebinding cannot reach the view."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass a request on only if its Host header names this machine."""
        if scope["type"] == "http":
            host = Request(scope).headers.get("host", "")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if not is_loopback(name.strip("[]")):
                response = PlainTextResponse(
                    "this web view answers only to a loopback Host (127.0.0.1, localhost)\n", 421
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class TokenGate:
    """Let a request through only with a human or builder token; serve the login form."""

    def __init__(self, app: ASGIApp, tokens: TokenStore, *, secure_cookie: bool) -> None:
        self.app = app
        self._tokens = tokens
        self._secure = secure_cookie
        self._sessions: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the login form, refuse a request without an allowed token, or pass it on."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        if request.url.path == "/login":
            response = await self._login(request)
        elif request.url.path.startswith(_OPEN_PATHS):
            await self.app(scope, receive, send)
            return
        else:
            try:
                refusal = self._refusal(request)
            except LazyMemoryError as error:  # the token file cannot be read: refuse, say why
                refusal = PlainTextResponse(f"{visible_line(error.message)}\n", 503)
            if refusal is None:
                await self.app(scope, receive, send)
                return
            response = refusal
        await response(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        """None for a request with an allowed token; else the answer that refuses it."""
        secret = _bearer(request) or self._sessions.get(request.cookies.get(SESSION_COOKIE, ""))
        token = None if secret is None else self._tokens.verify(secret)
        if token is None:
            if "text/html" in request.headers.get("accept", ""):
                return RedirectResponse("/login", 303)
            return PlainTextResponse(
                "this web view needs a human or builder token: Authorization: Bearer SECRET\n",
                401,
                headers={"WWW-Authenticate": 'Bearer realm="lazy web"'},
            )
        if token.role not in ALLOWED_ROLES:
            return PlainTextResponse(_role_refusal(token) + "\n", 403)
        return None

    async def _login(self, request: Request) -> Response:
        if request.method == "GET":
            return HTMLResponse(login_page(None))
        if request.method != "POST":
            return PlainTextResponse("use GET or POST\n", 405, headers={"Allow": "GET, POST"})
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > _MAX_LOGIN_BYTES:
                return PlainTextResponse("the login form is too large\n", 413)
        secret = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0].strip()
        try:
            token = self._tokens.verify(secret) if secret else None
        except LazyMemoryError as error:
            return HTMLResponse(login_page(error.message), 503)
        if token is None:
            return HTMLResponse(login_page("That is not a valid token."), 401)
        if token.role not in ALLOWED_ROLES:
            return HTMLResponse(login_page(_role_refusal(token)), 403)
        session = secrets.token_urlsafe(32)
        self._sessions[session] = secret
        while len(self._sessions) > MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        response = RedirectResponse("/", 303)
        response.set_cookie(
            SESSION_COOKIE, session, httponly=True, samesite="strict", secure=self._secure, path="/"
        )
        return response


def login_page(error: str | None) -> str:
    """The login form: a token's secret, posted to this process only (CSP form-action)."""
    said = "" if error is None else f'<p class="error" id="login-error">{line(error)}</p>'
    return page(
        "Log in",
        "<h1>Log in</h1><p>This web view needs a human or builder token "
        "(<code>lazy engine token add --role human</code>).</p>"
        f"{said}"
        '<form class="login" method="post" action="/login">'
        '<input type="password" name="token" aria-label="token secret" autocomplete="off" '
        'placeholder="lzm_..." required><button type="submit">Log in</button></form>',
    )


def _bearer(request: Request) -> str | None:
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    return secret.strip() or None if scheme.lower() == "bearer" else None


def _role_refusal(token: TokenInfo) -> str:
    return (
        f"token {token.id} has role {token.role.value}, which may not open the web view: use a "
        "human or builder token"
    )
