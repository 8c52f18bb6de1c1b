"""HTML for stored text, and the page layout every page shares.

Stored text is hostile (docs/architecture.md, Injection): every name, description, body,
actor and error goes through `line` or `text` below, which make controls and bidi/format
characters visible exactly as the terminal outputs do (engine/visible.py) and then escape it
for HTML. Pages never concatenate a stored string any other way.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import UTC, datetime
from urllib.parse import quote

from lazy_memory.engine.visible import visible_line, visible_text

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""No inline script or style, nothing from elsewhere, no framing: see app.py."""

NAVIGATION = (
    ("/", "Index"),
    ("/search", "Search"),
    ("/compact", "Compact"),
    ("/doctor", "Doctor"),
)


def line(value: str) -> str:
    """A one-line stored field (name, description, actor, snippet, error) as HTML text."""
    return html.escape(visible_line(value))


def text(value: str) -> str:
    """Multi-line stored text (a body, a section, a summary) as HTML text, for a <pre>."""
    return html.escape(visible_text(value))


def attribute(value: str) -> str:
    """A value for a quoted HTML attribute (already visible, or not stored text at all)."""
    return html.escape(value, quote=True)


def record_href(name: str, **query: int) -> str:
    """The record page's address for name, escaped for an href attribute.

    The name goes in the query string, percent-encoded whole: a name imported before the name
    rule may hold a slash, and any name may hold `&`, `#` or `?`.
    """
    extra = "".join(f"&{key}={value}" for key, value in query.items())
    return attribute(f"/record?name={quote(name, safe='')}{extra}")


def record_link(name: str) -> str:
    """A link to the record page, showing the name as every output shows it."""
    return f'<a class="record" href="{record_href(name)}">{line(name)}</a>'


def when(moment: datetime) -> str:
    """A time as the CLI prints it: UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def page(title: str, body: str, *, current: str = "") -> str:
    """A whole HTML document: the navigation, the live-update banner slot and the body.

    title is this module's own text or already escaped; body is HTML. The one script is the
    static live-update file: the CSP forbids any other.
    """
    links = "".join(
        f'<a href="{href}"{" aria-current=page" if href == current else ""}>{label}</a>'
        for href, label in NAVIGATION
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · lazy memory</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/web.css">'
        '<script src="/static/live.js" defer></script>'
        "</head><body>"
        f'<header><span class="brand">lazy memory</span><nav>{links}</nav></header>'
        '<div id="banner" role="status" aria-live="polite" hidden></div>'
        f'<main id="content">{body}</main>'
        "</body></html>\n"
    )


def table(header: Iterable[str], rows: Iterable[Iterable[str]], *, css: str = "") -> str:
    """An HTML table; header cells are this module's text, row cells are HTML already."""
    head = "".join(f"<th>{cell}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
