"""The word lists corpus templates draw from, and the draw for each template field.

The invented company's tools, vendors, incidents, habits and the rest, as small named tuples,
and DRAWS: for each field a template may name (`{tool.name}`, `{month}`, ...), how to draw
its value. Private to bench.corpus, which composes records from them.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import NamedTuple


class _Tool(NamedTuple):
    name: str
    command: str
    config: str


class _Failure(NamedTuple):
    slug: str
    phrase: str
    fix: str


class _Flake(NamedTuple):
    slug: str
    test: str
    cause: str
    fix: str


class _Migration(NamedTuple):
    slug: str
    old: str
    new: str


class _Flag(NamedTuple):
    slug: str
    key: str
    label: str


class _Quarter(NamedTuple):
    slug: str
    label: str


class _Metric(NamedTuple):
    slug: str
    phrase: str


class _Style(NamedTuple):
    slug: str
    rule: str


class _Risk(NamedTuple):
    slug: str
    action: str
    reason: str


class _Library(NamedTuple):
    new: str
    old: str
    reason: str


class _Habit(NamedTuple):
    slug: str
    rule: str


class _Vendor(NamedTuple):
    slug: str
    label: str
    url: str
    use: str


class _Role(NamedTuple):
    slug: str
    phrase: str
    implication: str


class _Languages(NamedTuple):
    known: str
    new: str


class _TimeZone(NamedTuple):
    slug: str
    hours: str


class _Editor(NamedTuple):
    slug: str
    label: str


_ENVIRONMENTS = ("staging", "production", "preview", "qa", "sandbox")
_TICKET_KEYS = ("PLAT", "BILL", "CORE", "INFRA", "GROW", "DATA", "SEC", "MOB")
_TOOLS = (
    _Tool("pytest", "pytest -q -x", "pyproject.toml"),
    _Tool("ruff", "ruff check --fix . && ruff format .", "ruff.toml"),
    _Tool("mypy", "mypy --strict src", "mypy.ini"),
    _Tool("terraform", "terraform fmt -recursive && terraform validate", "infra/terraform"),
    _Tool("eslint", "pnpm lint", "eslint.config.js"),
    _Tool("pre-commit", "pre-commit run --all-files", ".pre-commit-config.yaml"),
    _Tool("helm", "helm lint charts/*", "charts/values.yaml"),
    _Tool("sqlfluff", "sqlfluff lint migrations", ".sqlfluff"),
    _Tool("playwright", "pnpm exec playwright test", "playwright.config.ts"),
    _Tool("hadolint", "hadolint Dockerfile", ".hadolint.yaml"),
)
_FAILURES = (
    _Failure("queue-backlog", "a kafka consumer backlog", "scaling consumers and a lag alert"),
    _Failure("db-connections", "postgres connection exhaustion", "putting pgbouncer in front"),
    _Failure("cert-expiry", "an expired TLS certificate", "cert-manager auto-renewal"),
    _Failure("oom-kills", "OOM kills in batch jobs", "streaming batches instead of loading them"),
    _Failure("replica-lag", "read-replica lag", "reading its own writes from the primary"),
    _Failure("retry-storm", "a client retry storm", "jittered exponential backoff"),
    _Failure("disk-full", "full disks on the workers", "log rotation and an 80% disk alert"),
    _Failure("redis-evictions", "redis evicting hot keys", "a bigger redis and key TTLs"),
)
_FLAKES = (
    _Flake("shared-db", "concurrent_writes", "shares one database", "give each worker a schema"),
    _Flake("wall-clock", "token_expiry", "reads the wall clock", "freeze time with time-machine"),
    _Flake("fixed-port", "server_start", "binds a fixed port", "bind port 0 instead"),
    _Flake("ordering", "list_endpoint", "assumes row order", "sort before comparing"),
    _Flake("network", "webhook_retry", "calls a real sandbox API", "record the calls with vcrpy"),
)
_MIGRATIONS = (
    _Migration("requests-to-httpx", "requests", "httpx"),
    _Migration("celery-to-temporal", "celery", "temporal"),
    _Migration("flask-to-fastapi", "flask", "fastapi"),
    _Migration("sqlalchemy-2", "SQLAlchemy 1.4 queries", "SQLAlchemy 2.0 select()"),
    _Migration("rest-to-grpc", "internal REST calls", "gRPC"),
    _Migration("jenkins-to-actions", "jenkins jobs", "GitHub Actions"),
)
_FLAGS = (
    _Flag("new-ui", "new_ui", "the redesigned UI"),
    _Flag("v2-api", "v2_api", "the v2 API"),
    _Flag("async-writes", "async_writes", "asynchronous writes"),
    _Flag("bulk-export", "bulk_export", "bulk export"),
    _Flag("multi-region", "multi_region", "multi-region reads"),
)
_QUARTERS = tuple(
    _Quarter(f"{year}-q{quarter}", f"Q{quarter} {year}")
    for year in (2025, 2026)
    for quarter in (1, 2, 3, 4)
)
_METRICS = (
    _Metric("latency", "latency"),
    _Metric("error-rate", "error rate"),
    _Metric("throughput", "throughput"),
    _Metric("queue-lag", "queue lag"),
    _Metric("saturation", "CPU and memory saturation"),
    _Metric("cache-hit-rate", "cache hit rate"),
)
_COMMIT_STYLES = (
    _Style("imperative", "commit subjects are imperative, under 72 characters; the body says why"),
    _Style("conventional", "use Conventional Commits (feat:, fix:, chore:) for release notes"),
    _Style("ticket-prefix", "start every commit subject with the Linear ticket id"),
    _Style("no-wip", "no WIP or fixup commits on main: squash them before the merge"),
)
_RISKS = (
    _Risk("force-push", "force-pushing any shared branch", "others build on those branches"),
    _Risk("schema-drops", "dropping or renaming a column", "old pods still read it mid-deploy"),
    _Risk("prod-commands", "running anything against production", "there is no undo"),
    _Risk("new-dependencies", "adding a dependency", "every one needs a licence review"),
    _Risk("skipping-tests", "skipping or deleting a failing test", "it hides real bugs"),
    _Risk("ci-changes", "editing CI workflows", "a broken workflow blocks every team"),
)
_LIBRARIES = (
    _Library("httpx", "requests", "it has async support and explicit timeouts"),
    _Library("pathlib", "os-path", "string path juggling caused two Windows bugs"),
    _Library("structlog", "print", "logs must be structured JSON for Datadog"),
    _Library("polars", "pandas", "the pandas jobs ran out of memory on big tenants"),
    _Library("pydantic-settings", "os-environ", "bad config should fail at startup"),
    _Library("time-machine", "freezegun", "freezegun is slow and misses some clocks"),
    _Library("uv", "pip", "the lock file must be reproducible on every machine"),
)
_HABITS = (
    _Habit(
        "terse-summaries", "end-of-task summaries: what changed, how it was verified, what is left"
    ),
    _Habit("no-emoji", "no emoji in commits, PR descriptions or code comments"),
    _Habit("options-first", "for design questions, give two options with trade-offs before coding"),
    _Habit(
        "show-commands", "report the exact commands run and their results, not just 'tests pass'"
    ),
    _Habit("why-comments", "comments explain why, never what; delete comments that restate code"),
    _Habit("bugfix-test-first", "for a bug fix, write the failing test first and show it failing"),
)
_VENDORS = (
    _Vendor("stripe", "Stripe", "https://docs.stripe.com/api", "charges and refunds"),
    _Vendor("twilio", "Twilio", "https://www.twilio.com/docs/usage/api", "SMS"),
    _Vendor("sendgrid", "SendGrid", "https://www.twilio.com/docs/sendgrid/api-reference", "email"),
    _Vendor("aws-s3", "AWS S3", "https://docs.aws.amazon.com/AmazonS3/latest/API/", "file storage"),
    _Vendor("segment", "Segment", "https://segment.com/docs/connections/sources/", "events"),
    _Vendor("algolia", "Algolia", "https://www.algolia.com/doc/rest-api/search/", "search"),
)
_ROLES = (
    _Role("backend-lead", "a backend lead", "frame changes by API contract and on-call risk"),
    _Role("staff-engineer", "a staff engineer", "they want the design reasoning, not a tutorial"),
    _Role("frontend-dev", "a frontend developer", "explain backend pieces from the UI's side"),
    _Role("sre", "an SRE", "call out alerts, rollbacks and capacity effects of every change"),
    _Role("data-engineer", "a data engineer", "mention schema and backfill effects on pipelines"),
    _Role("product-manager", "a product manager", "lead with user impact; skip code detail"),
    _Role("new-hire", "a new hire (first month)", "link the docs you rely on and explain jargon"),
    _Role("security-engineer", "a security engineer", "flag auth, secrets and PII handling"),
)
_LANGUAGE_PAIRS = (
    _Languages("python", "go"),
    _Languages("java", "kotlin"),
    _Languages("typescript", "python"),
    _Languages("ruby", "python"),
    _Languages("go", "rust"),
    _Languages("python", "typescript"),
)
_TIME_ZONES = (
    _TimeZone("cet", "09:00-17:30 CET"),
    _TimeZone("us-pacific", "09:00-17:00 US Pacific"),
    _TimeZone("ist", "10:00-19:00 IST"),
    _TimeZone("us-eastern", "08:00-16:00 US Eastern"),
    _TimeZone("aest", "08:30-17:00 AEST"),
)
_EDITORS = (
    _Editor("neovim", "Neovim"),
    _Editor("vscode", "VS Code"),
    _Editor("pycharm", "PyCharm"),
    _Editor("emacs", "Emacs"),
)

_UID_ALPHABET = string.ascii_lowercase + string.digits
_Draw = Callable[[random.Random], object]


def _pick(options: tuple[object, ...]) -> _Draw:
    return lambda rng: rng.choice(options)


DRAWS: dict[str, _Draw] = {
    "env": _pick(_ENVIRONMENTS),
    "tool": _pick(_TOOLS),
    "failure": _pick(_FAILURES),
    "flake": _pick(_FLAKES),
    "migration": _pick(_MIGRATIONS),
    "flag": _pick(_FLAGS),
    "quarter": _pick(_QUARTERS),
    "metric": _pick(_METRICS),
    "style": _pick(_COMMIT_STYLES),
    "risk": _pick(_RISKS),
    "library": _pick(_LIBRARIES),
    "habit": _pick(_HABITS),
    "vendor": _pick(_VENDORS),
    "role": _pick(_ROLES),
    "languages": _pick(_LANGUAGE_PAIRS),
    "zone": _pick(_TIME_ZONES),
    "editor": _pick(_EDITORS),
    "minutes": _pick((5, 10, 15, 30, 60)),
    "rps": _pick((50, 100, 200, 500, 1000)),
    "percent": _pick((1, 5, 10, 25, 50)),
    "pr_lines": _pick((200, 300, 400, 500)),
    "days": _pick((14, 30, 90)),
    "ticket_key": _pick(_TICKET_KEYS),
    "ticket": lambda rng: f"{rng.choice(_TICKET_KEYS)}-{rng.randint(100, 4999)}",
    "month": lambda rng: f"2025-{rng.randint(1, 12):02d}",
    "uid": lambda rng: "".join(rng.choices(_UID_ALPHABET, k=9)),
}
