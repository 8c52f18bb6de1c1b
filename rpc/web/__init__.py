"""`lazy web`: a read-only web view of the store (issue 21), an optional extra.

Everything here maps what the engine already computes onto server-rendered HTML: the launch
section for both roles, a record's history and the diff of two revisions, search, the
compact's status and doctor's diagnosis, with server-sent events when a record changes. It
imports Starlette and uvicorn (`pip install 'lazy-memory[web]'`); nothing outside this
package imports it, so the core never needs them. The modules:

- markup.py: escaping (HTML plus engine/visible.py) and the page layout
- pages.py: the index, search, compact and doctor pages
- history.py: a record's page, its timeline and the diff of two revisions
- live.py: the change feed fanned out to server-sent event streams
- listen.py: where it may listen (loopback, or TLS unless --insecure-http)
- auth.py: the token gate and login form for non-loopback addresses, the loopback Host check
- app.py: the routes and the security headers every response carries
- serve.py: `lazy web` itself, from settings to a listening uvicorn server
"""
