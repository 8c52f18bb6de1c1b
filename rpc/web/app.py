"""The web view's routes, and the headers every response carries.

Handlers only read: each parses its query, calls one MemoryService method (or two), and hands
the result to pages.py or history.py. There is no route that writes, and only GET and HEAD
are served (the login form's POST, off the loopback, is auth.py's and writes nothing to the
store). Every response, errors and static files included, carries the Content-Security-Policy
of markup.py: no inline script or style, nothing from another origin, no framing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lazy_memory.engine.constants import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT
from lazy_memory.engine.context import Role
from lazy_memory.engine.errors import InvalidQuery, LazyMemoryError, NotFound
from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.service import MemoryService
from lazy_memory.rpc.web import history, pages
from lazy_memory.rpc.web.live import ChangeBroadcast
from lazy_memory.rpc.web.markup import CONTENT_SECURITY_POLICY, line, page

STATIC = Path(__file__).with_name("static")
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


class SecurityHeaders:
    """Add SECURITY_HEADERS to every HTTP response, whoever produced it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, adding the headers to its response's start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in SECURITY_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = kept + list(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class WebView:
    """The routes' collaborators: the read-only service and the change broadcast."""

    def __init__(self, service: MemoryService, broadcast: ChangeBroadcast) -> None:
        self.service = service
        self.broadcast = broadcast
        # The last index page of each role and the store's change marker it was read under:
        # at 10,000 records rendering one takes tens of milliseconds, reading the marker none.
        self._index_pages: dict[Role, tuple[str, str]] = {}

    async def index(self, request: Request) -> Response:
        """`/?role=builder|agent`: the section that role's launches inject."""
        try:
            role = Role(request.query_params.get("role", Role.BUILDER.value))
        except ValueError:
            return _error(400, "role is builder or agent")
        since = self.broadcast.sequence
        try:
            marker: str | None = await self.service.storage.change_marker()
        except LazyMemoryError:
            marker = None
        cached = self._index_pages.get(role)
        if marker is not None and cached is not None and cached[0] == marker:
            return self._html(cached[1], since)
        context = await self.service.launch_context(role)
        entries: Sequence[IndexEntry] = []
        if context.available:
            try:
                entries = await self.service.index()
            except LazyMemoryError:
                entries = []  # the section says it all; the lines just lose their links
        document = pages.index_page(context, entries)
        if marker is not None and context.available:
            self._index_pages[role] = (marker, document)
        return self._html(document, since)

    async def record(self, request: Request) -> Response:
        """`/record?name=NAME[&from=REV&to=REV]`: a record, its timeline, a diff.

        The timeline's form sends the name percent-encoded once more, as `quoted`.
        """
        name = request.query_params.get("name")
        quoted = request.query_params.get("quoted")
        if name is None and quoted is not None:
            name = unquote(quoted)
        if name is None:
            return _error(400, "which record? /record?name=NAME")
        since = self.broadcast.sequence
        try:
            entries = await self.service.history(name)
        except NotFound:
            return HTMLResponse(history.not_found_page(name), 404)
        live = await self.service.recall_if_live(name)
        pair = _pair(request) or history.default_pair(entries)
        return self._html(history.record_page(name, entries, live, pair), since)

    async def search(self, request: Request) -> Response:
        """`/search?q=QUERY[&limit=N]`: what the project's query language finds."""
        query = request.query_params.get("q")
        limit = _integer(request.query_params.get("limit")) or DEFAULT_SEARCH_LIMIT
        since = self.broadcast.sequence
        if query is None:
            return self._html(pages.search_page("", None, None), since)
        try:
            hits = await self.service.search(query, min(limit, MAX_SEARCH_LIMIT))
        except InvalidQuery as error:
            return self._html(pages.search_page(query, None, error.message), since, 400)
        return self._html(pages.search_page(query, hits, None), since)

    async def compact(self, request: Request) -> Response:
        """`/compact`: the compact, what it covers, and what is newer."""
        since = self.broadcast.sequence
        return self._html(pages.compact_page(await self.service.compact_status()), since)

    async def doctor(self, request: Request) -> Response:
        """`/doctor`: doctor's diagnosis, the injected size against the advisory size."""
        since = self.broadcast.sequence
        return self._html(pages.doctor_page(await self.service.doctor()), since)

    async def events(self, request: Request) -> Response:
        """`/events?since=N`: server-sent events, one per change after change number N."""
        since = _integer(request.headers.get("last-event-id"))
        if since is None:
            since = _integer(request.query_params.get("since")) or 0
        return StreamingResponse(
            self.broadcast.stream(since),
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},
        )

    def _html(self, document: str, since: int, status: int = 200) -> HTMLResponse:
        # The change number the page was read at, for live.js to ask for what came after.
        return HTMLResponse(document.replace("<body>", f'<body data-since="{since}">', 1), status)


def build_app(view: WebView, outer: Sequence[Middleware] = ()) -> ASGIApp:
    """The web view as an ASGI app, with outer middleware (auth.py's) in front of the routes.

    SecurityHeaders wraps the whole application, so even Starlette's own error answers
    carry the headers.
    """
    routes = Starlette(
        routes=[
            Route("/", view.index, methods=["GET"]),
            Route("/record", view.record, methods=["GET"]),
            Route("/search", view.search, methods=["GET"]),
            Route("/compact", view.compact, methods=["GET"]),
            Route("/doctor", view.doctor, methods=["GET"]),
            Route("/events", view.events, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        middleware=list(outer),
        exception_handlers={LazyMemoryError: _store_error},
    )
    return SecurityHeaders(routes)


async def _store_error(request: Request, error: Exception) -> Response:
    """A store that cannot be read (or any engine error a page did not expect), in one line."""
    message = error.message if isinstance(error, LazyMemoryError) else str(error)
    return _error(503, f"The store cannot be read: {message}")


def _error(status: int, message: str) -> HTMLResponse:
    return HTMLResponse(
        page("Error", f'<h1>Error</h1><p class="error" id="error">{line(message)}</p>'), status
    )


def _pair(request: Request) -> tuple[int, int] | None:
    before = _integer(request.query_params.get("from"))
    after = _integer(request.query_params.get("to"))
    return None if before is None or after is None else (before, after)


def _integer(value: str | None) -> int | None:
    # Nine digits at most: Python refuses to parse very long ones, and no revision is that big.
    if value is None or not value.isdigit() or len(value) > 9:
        return None
    return int(value)
