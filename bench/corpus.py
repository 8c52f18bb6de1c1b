"""A realistic, seeded memory store: the records coding agents save, for tests and benchmarks.

Records are composed from templates and word lists around a small invented company: its
subsystems (each with an owning team, a datastore, an upstream service), its tools, vendors,
incidents and the people who work there. Subsystems are drawn with a skewed weight, so a big
store holds many records about the same few services and tools, the overlapping knowledge a
summary is expected to merge.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from lazy_memory.engine.ports import Storage
from lazy_memory.engine.records import (
    Actor,
    ActorKind,
    Record,
    RecordContent,
    RecordType,
)

CORPUS_ACTOR = Actor(kind=ActorKind.SYSTEM, detail="corpus")
"""Who fill_store says wrote every record."""

CORPUS_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""The time of the first record; each later one is a minute after the one before."""

TYPE_SHARES: Mapping[RecordType, float] = {
    RecordType.PROJECT: 0.45,
    RecordType.FEEDBACK: 0.25,
    RecordType.REFERENCE: 0.20,
    RecordType.USER: 0.10,
}
"""The share of each record type in a generated store."""


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


# (name, the table it owns): the entity makes "owns", "caches" and "batch" records concrete.
_SUBSYSTEMS = (
    ("auth", "credentials"),
    ("billing", "invoices"),
    ("search", "search_documents"),
    ("ingest", "raw_events"),
    ("api-gateway", "routes"),
    ("payments", "payment_intents"),
    ("notifications", "notification_jobs"),
    ("scheduler", "scheduled_tasks"),
    ("reporting", "report_runs"),
    ("exports", "export_jobs"),
    ("onboarding", "signup_steps"),
    ("webhooks", "webhook_deliveries"),
    ("checkout", "carts"),
    ("inventory", "stock_levels"),
    ("analytics", "sessions_daily"),
    ("admin-console", "admin_actions"),
    ("mobile-api", "device_tokens"),
    ("email", "email_templates"),
    ("feature-flags", "flag_overrides"),
    ("audit-log", "audit_events"),
    ("uploads", "uploaded_files"),
    ("pricing", "price_books"),
    ("recommendations", "item_scores"),
    ("ledger", "ledger_entries"),
    ("invoicing", "invoice_lines"),
    ("sync-worker", "sync_cursors"),
    ("media-pipeline", "transcode_jobs"),
    ("geo", "regions"),
)
_TEAMS = ("platform", "growth", "revenue", "core-api", "data", "trust", "mobile", "infra")
_DATASTORES = ("postgres", "postgres", "postgres", "mysql")
_LAYOUTS = ("services", "apps", "backend")
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


@dataclass(frozen=True)
class _Subsystem:
    """One service of the invented company, with the facts every record about it shares."""

    name: str
    entity: str
    team: str
    store: str
    path: str
    port: int
    upstream: str

    @property
    def module(self) -> str:
        return self.name.replace("-", "_")

    @property
    def entity_slug(self) -> str:
        return self.entity.replace("_", "-")

    @property
    def channel(self) -> str:
        return f"#{self.team}-eng"

    @property
    def topic(self) -> str:
        return f"{self.name}.events.v1"

    @property
    def env_prefix(self) -> str:
        return self.module.upper()


def _company(rng: random.Random) -> list[_Subsystem]:
    """The seed's subsystems, most talked-about first."""
    subsystems = [
        _Subsystem(
            name=name,
            entity=entity,
            team=rng.choice(_TEAMS),
            store=rng.choice(_DATASTORES),
            path=f"{rng.choice(_LAYOUTS)}/{name}",
            port=8000 + index,
            upstream=rng.choice([other for other, _ in _SUBSYSTEMS if other != name]),
        )
        for index, (name, entity) in enumerate(_SUBSYSTEMS)
    ]
    rng.shuffle(subsystems)
    return subsystems


class _Template(NamedTuple):
    type: RecordType
    name: str
    description: str
    body: str


def _lines(*lines: str) -> str:
    return "\n".join(lines)


_TEMPLATES = (
    _Template(
        RecordType.PROJECT,
        "deploy-{env}-{sub.name}",
        "Deploy {sub.name} to {env} with `make deploy SERVICE={sub.name} ENV={env}` from main, "
        "only after CI is green",
        _lines(
            "The Makefile target tags the image, runs the migration job, then `helm upgrade`.",
            "**Why:** a hand-run `helm upgrade` in {month} skipped the migrations and broke "
            "{sub.name}.",
            "**How to apply:** confirm the main pipeline is green first, then:",
            "```sh",
            "make deploy SERVICE={sub.name} ENV={env}",
            "```",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "db-migrations-{sub.name}",
        "Schema changes to {sub.name} go through alembic in {sub.path}/migrations; never edit "
        "a migration that has shipped",
        _lines(
            "{sub.name} keeps its data in {sub.store}; each change is a new alembic revision.",
            "**Why:** shipped migrations already ran in {env}; editing one forks the history.",
            "**How to apply:** `alembic revision --autogenerate -m ...`, read the generated SQL, "
            "then `alembic upgrade head` locally before pushing.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-owns-{sub.entity_slug}",
        "The {sub.name} service owns the `{sub.entity}` table; other services read it only "
        "through the {sub.name} API",
        _lines(
            "The {sub.team} team runs {sub.name} and its {sub.store} schema.",
            "**Why:** direct cross-schema reads broke twice when `{sub.entity}` columns were "
            "renamed.",
            "**How to apply:** if {sub.upstream} needs this data, add an endpoint under "
            "{sub.path}/api instead of a join.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-events-topic",
        "{sub.name} publishes to kafka topic `{sub.topic}`; delivery is at-least-once, so "
        "consumers must be idempotent",
        _lines(
            "{sub.upstream} consumes it with its own consumer group.",
            "**Why:** redeliveries after a rebalance are normal; in {month} a duplicate event "
            "double-counted `{sub.entity}`.",
            "**How to apply:** dedupe on the `event_id` header before any side effect.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-redis-cache",
        "{sub.name} caches `{sub.entity}` lookups in redis for {minutes} minutes; every write "
        "must call `invalidate_{sub.module}_cache()`",
        _lines(
            "Keys look like `{sub.name}:{sub.entity}:<id>`.",
            "**Why:** stale reads after updates were the top support complaint before "
            "invalidation existed.",
            "**How to apply:** call the helper after the transaction commits, never before.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "flaky-test-{sub.name}-{flake.slug}",
        "test_{sub.module}_{flake.test} is flaky under pytest-xdist (it {flake.cause}); rerun "
        "it alone before blaming your change",
        _lines(
            "Known flake, tracked in {ticket}.",
            "**Why:** several sessions lost an hour bisecting it as a regression.",
            "**How to apply:** `pytest {sub.path}/tests -k {flake.test} -p no:xdist` to confirm; "
            "the real fix is to {flake.fix}.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-config-env",
        "{sub.name} reads settings from `{sub.env_prefix}_*` environment variables; local "
        "defaults live in {sub.path}/.env.example",
        _lines(
            "pydantic-settings parses them once at startup in `{sub.path}/settings.py`.",
            "**Why:** secrets come from vault in {env} and must never be committed.",
            "**How to apply:** add a new variable to the settings class and to .env.example "
            "in the same PR.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-migrating-{migration.slug}",
        "{sub.name} is moving from {migration.old} to {migration.new}; new code uses "
        "{migration.new}, old callers stay until {quarter.label}",
        _lines(
            "Tracked in {ticket}; about half of {sub.path} is converted.",
            "**Why:** a one-PR conversion was tried and reverted as too risky for a live service.",
            "**How to apply:** touch {migration.old} code only to fix bugs; anything new or "
            "rewritten uses {migration.new}.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "incident-{month}-{sub.name}-{failure.slug}",
        "{month} incident: {sub.name} hit {failure.phrase}; fixed by {failure.fix}, follow-up "
        "in {ticket}",
        _lines(
            "Postmortem: docs/postmortems/{month}-{sub.name}.md",
            "**Why it matters:** {sub.upstream} has the same failure mode and no fix yet.",
            "**How to apply:** keep the fix and its alert in place when refactoring {sub.name}.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-local-dev",
        "Run {sub.name} locally with `docker compose up {sub.name} {sub.store}` and seed it with "
        "`make seed-{sub.name}`",
        _lines(
            "It listens on localhost:{sub.port}; the compose file is at the repository root.",
            "**Why:** the shared dev cluster is often broken and slow to redeploy.",
            "**How to apply:** rerun the seed target after every `docker compose down -v`.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-ownership",
        "The {sub.team} team owns {sub.name}; ask in {sub.channel} before changing its public "
        "API or its {sub.store} schema",
        _lines(
            "Code owners for {sub.path} are in .github/CODEOWNERS; their review is required.",
            "**Why:** {sub.upstream} depends on the {sub.name} API and broke on an unannounced "
            "change in {month}.",
            "**How to apply:** open the PR early as a draft and link it in {sub.channel}.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-rate-limit",
        "The gateway limits {sub.name} to {rps} requests/s per tenant; bulk jobs must use the "
        "batch endpoint",
        _lines(
            "Limits live in the api-gateway config under `routes.{sub.module}`.",
            "**Why:** a backfill in {month} throttled real customers for an hour.",
            "**How to apply:** send `{sub.entity}` in batches of at most 500 to "
            "`POST /v1/{sub.entity}:batch`.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "release-freeze-{quarter.slug}-{sub.name}",
        "Code freeze on {sub.name} before the {quarter.label} launch; only hotfixes approved by "
        "a {sub.team} lead get merged",
        _lines(
            "The window is announced in {sub.channel}; the release branch is cut the Monday "
            "before.",
            "**Why:** the launch demo runs on {env} and must not move under the presenters.",
            "**How to apply:** keep feature work on branches and rebase after the freeze.",
        ),
    ),
    _Template(
        RecordType.PROJECT,
        "{sub.name}-flag-{flag.slug}",
        "{sub.name} work on {flag.label} ships behind the `{sub.module}_{flag.key}` flag, now on "
        "for {percent}% of tenants",
        _lines(
            "Flags live in LaunchDarkly; new tenants default to off.",
            "**Why:** it changes how `{sub.entity}` is written and must be reversible without "
            "a deploy.",
            "**How to apply:** guard every new path with the flag; removal is {ticket}.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "prefer-small-prs-{sub.name}",
        "For {sub.name}, the user wants PRs under {pr_lines} lines with one concern each; split "
        "refactors from behaviour changes",
        _lines(
            "Said after a large PR to {sub.path} sat in review for a week.",
            "**Why:** {sub.name} has few reviewers and big diffs get rubber-stamped.",
            "**How to apply:** stack PRs; renames and moves go first, on their own.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "real-{sub.store}-in-{sub.name}-tests",
        "Tests for {sub.name} must hit a real {sub.store} through the `db` fixture, not mocks",
        _lines(
            "The fixture starts a throwaway container once per session.",
            "**Why:** mocked tests passed while a migration broke {env} in {month}.",
            "**How to apply:** use the fixture; mock only third-party HTTP APIs.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "run-{tool.name}-before-commit",
        "Always run `{tool.command}` before committing; the user does not want {tool.name} "
        "failures showing up in CI",
        _lines(
            "Said after a {sub.name} PR failed {tool.name} in CI; CI runs the same check.",
            "**Why:** a red pipeline costs the user a wasted review round.",
            "**How to apply:** run it from the repository root; its config is `{tool.config}`.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "commit-messages-{style.slug}",
        "Commit style the user insists on: {style.rule}",
        _lines(
            "The user corrected this more than once, most recently on a {sub.name} PR.",
            "**How to apply:** check `git log --oneline -5` before pushing; reword if needed.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "ask-before-{risk.slug}",
        "Ask the user before {risk.action}, even when it looks like the obvious fix: {risk.reason}",
        _lines(
            "Came up during {sub.name} work; they want to review it first, whatever the urgency.",
            "**Why:** {risk.reason}.",
            "**How to apply:** stop, describe the change and wait for an explicit yes.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "prefer-{library.new}-over-{library.old}",
        "Use {library.new} instead of {library.old} in new code: {library.reason}",
        _lines(
            "Existing {library.old} code (much of it in {sub.path}) is migrated only when touched.",
            "**Why:** {library.reason}.",
            "**How to apply:** in review, the user flags new {library.old} usage as a blocker.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "typed-errors-{sub.name}",
        "In {sub.name}, raise the typed errors from `{sub.module}/errors.py`, never a bare "
        "Exception deep in the code",
        _lines(
            "The API layer maps each typed error to a status code in one place.",
            "**Why:** a bare Exception surfaced as a 500 with a stack trace in {month}.",
            "**How to apply:** add a new error class there if none fits.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "working-style-{habit.slug}",
        "The user's working style: {habit.rule}",
        _lines(
            "Repeated in several sessions, last during {sub.name} work; it is a standing rule.",
            "**How to apply:** check the last message against it before handing back.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "no-new-deps-{sub.name}",
        "Don't add third-party dependencies to {sub.name} without asking; its image size and "
        "CVE surface are audited",
        _lines(
            "The {sub.team} team reviews every new package in {sub.path}/pyproject.toml.",
            "**Why:** a transitive dependency pulled in a critical CVE last quarter.",
            "**How to apply:** prefer the standard library; propose a package in {sub.channel}.",
        ),
    ),
    _Template(
        RecordType.FEEDBACK,
        "logging-{sub.name}",
        "Log with structlog in {sub.name}, include tenant_id and request_id, and never log "
        "`{sub.entity}` payloads (PII)",
        _lines(
            "Logs ship to Datadog and are kept for {days} days.",
            "**Why:** a payload in the logs was a reportable PII incident.",
            "**How to apply:** log ids and counts only.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "grafana-dashboard-{sub.name}-{metric.slug}",
        "Grafana dashboard for {sub.name} {metric.phrase}: "
        "https://grafana.internal.example.com/d/{uid}/{sub.name}-{metric.slug}",
        _lines(
            "Panels: p50/p95/p99 per endpoint, split by region.",
            "First stop when {sub.name} alerts fire in {sub.channel}.",
            "Alert thresholds are in `monitoring/alerts/{sub.name}.yaml`.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "sentry-{sub.name}",
        "Sentry project for {sub.name} errors: "
        "https://sentry.example.com/organizations/acme/issues/?project={sub.name}",
        _lines(
            "Filter by `environment:{env}`; releases are tagged with the git SHA.",
            "Issues assigned to {sub.team} page nobody; triage them weekly.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "runbook-{sub.name}-{failure.slug}",
        "Runbook for {failure.phrase} in {sub.name}: docs/runbooks/{sub.name}/{failure.slug}.md",
        _lines(
            "Covers the safe restart order, the knobs that are safe to turn, and who to page.",
            "Written after the {month} incident; the lasting fix was {failure.fix}.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "design-doc-{sub.name}-{flag.slug}",
        "Design doc for {flag.label} in {sub.name}: "
        "https://docs.example.com/design/{sub.name}-{flag.slug}",
        _lines(
            "Approved in {month}; the open questions section is still accurate.",
            "Read it before changing how {sub.name} stores `{sub.entity}`.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "{vendor.slug}-api-{sub.name}",
        "{vendor.label} API reference, used by {sub.name} for {vendor.use}: {vendor.url}",
        _lines(
            "Our client wrapper is `{sub.path}/clients/{vendor.slug}.py`; use it, not raw HTTP.",
            "Sandbox credentials are in vault under `{env}/{sub.name}/{vendor.slug}`.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "oncall-{sub.team}",
        "PagerDuty schedule for the {sub.team} on-call, which covers {sub.name}: "
        "https://acme.pagerduty.com/schedules#{uid}",
        _lines(
            "Escalation goes to the {sub.team} lead after 15 minutes.",
            "Handover notes are pinned in {sub.channel}.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "linear-{sub.name}",
        "Linear project {ticket_key} tracks {sub.name} work; bugs get the `{sub.name}` label and "
        "go to triage",
        _lines(
            "Board: https://linear.app/acme/project/{sub.name}-{uid}",
            "Link the ticket id in the PR title so the issue moves on merge.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "{tool.name}-config-location",
        "{tool.name} configuration for the monorepo lives in `{tool.config}`; per-service "
        "overrides are not allowed",
        _lines(
            "The CI job runs `{tool.command}` with exactly that config.",
            "Change it in its own PR and tag the platform team.",
        ),
    ),
    _Template(
        RecordType.REFERENCE,
        "openapi-spec-{sub.name}",
        "OpenAPI spec for {sub.name}: {sub.path}/openapi.yaml, rendered at "
        "https://api-docs.internal.example.com/{sub.name}",
        _lines(
            "Generated from the route decorators by `make openapi`; do not edit it by hand.",
            "CI fails if the committed spec is stale.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-role-{role.slug}",
        "The user is {role.phrase} on the {sub.team} team; {role.implication}",
        _lines(
            "Mentioned in their first session while working on {sub.name}.",
            "**How to apply:** {role.implication}.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-knows-{languages.known}-new-to-{languages.new}",
        "The user has years of {languages.known} but is new to {languages.new}; explain "
        "{languages.new} idioms by analogy",
        _lines(
            "They are porting parts of {sub.name} and read {languages.new} slowly.",
            "**How to apply:** point out where {languages.new} differs from {languages.known}; "
            "skip basics they already know.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-hours-{zone.slug}",
        "The user works {zone.hours}; long jobs should finish or checkpoint before they log off",
        _lines(
            "Unattended runs overnight have failed silently before.",
            "**How to apply:** estimate run time first and say so when it will not finish.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-reviews-{sub.name}",
        "The user is the required reviewer for {sub.name}; they read diffs commit by commit, so "
        "keep history clean",
        _lines(
            "They are in the {sub.team} team and on its on-call rotation.",
            "**How to apply:** one logical change per commit, no fixups left behind.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-editor-{editor.slug}",
        "The user edits in {editor.label}; give locations as `path:line` so they can jump to them",
        _lines(
            "They copy locations straight from the chat into the editor.",
            "**How to apply:** relative paths from the repository root, with line numbers.",
        ),
    ),
    _Template(
        RecordType.USER,
        "user-focus-{sub.name}",
        "This quarter the user mostly works on {sub.name} and {sub.upstream}; assume questions "
        "are about those unless stated",
        _lines(
            "Their team is {sub.team}; {sub.name} questions go to {sub.channel} otherwise.",
            "**How to apply:** search {sub.path} first when a question is ambiguous.",
        ),
    ),
)
_TEMPLATES_BY_TYPE = {
    record_type: [template for template in _TEMPLATES if template.type is record_type]
    for record_type in RecordType
}

_UID_ALPHABET = string.ascii_lowercase + string.digits
_Draw = Callable[[random.Random], object]


def _pick(options: tuple[object, ...]) -> _Draw:
    return lambda rng: rng.choice(options)


_DRAWS: dict[str, _Draw] = {
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


class _Slots(dict[str, object]):
    """Template fields drawn on first use, so one record says the same thing everywhere."""

    def __init__(self, rng: random.Random, subsystem: _Subsystem) -> None:
        super().__init__(sub=subsystem)
        self._rng = rng

    def __missing__(self, key: str) -> object:
        value = self[key] = _DRAWS[key](self._rng)
        return value


def realistic_records(count: int, seed: int = 0) -> list[RecordContent]:
    """Count believable memory records with unique names, the same for the same seed."""
    rng = random.Random(seed)
    company = _company(rng)
    # Zipf-like weights: a handful of services collect most of the knowledge, as in real repos.
    subsystem_weights = [1 / rank for rank in range(1, len(company) + 1)]
    names = _NameBook()
    records = []
    for record_type in _type_sequence(count, rng):
        template = rng.choice(_TEMPLATES_BY_TYPE[record_type])
        slots = _Slots(rng, rng.choices(company, weights=subsystem_weights)[0])
        records.append(
            RecordContent(
                name=names.claim(template.name.format_map(slots)),
                type=record_type,
                description=template.description.format_map(slots),
                body=template.body.format_map(slots),
            )
        )
    return records


async def fill_store(storage: Storage, count: int, seed: int = 0) -> list[Record]:
    """Save realistic_records(count, seed) into storage, a minute apart, as the corpus actor."""
    return [
        await storage.save_record(
            content, actor=CORPUS_ACTOR, at=CORPUS_START + timedelta(minutes=index)
        )
        for index, content in enumerate(realistic_records(count, seed))
    ]


def _type_sequence(count: int, rng: random.Random) -> list[RecordType]:
    """Count types in the designed shares, exact up to rounding at every size, then shuffled."""
    assigned = dict.fromkeys(TYPE_SHARES, 0)
    sequence = []
    for position in range(1, count + 1):
        # The type furthest behind its share goes next, so small stores still hold every type.
        behind = max(TYPE_SHARES, key=lambda kind: TYPE_SHARES[kind] * position - assigned[kind])
        assigned[behind] += 1
        sequence.append(behind)
    rng.shuffle(sequence)
    return sequence


class _NameBook:
    """Hands out unique names: a repeated stem gets the next free numeric suffix."""

    def __init__(self) -> None:
        self._taken: set[str] = set()
        self._last_suffix: dict[str, int] = {}

    def claim(self, stem: str) -> str:
        """Stem itself the first time, then stem-2, stem-3, ... (skipping any already taken)."""
        name, suffix = stem, self._last_suffix.get(stem, 1)
        while name in self._taken:
            suffix += 1
            name = f"{stem}-{suffix}"
        self._taken.add(name)
        self._last_suffix[stem] = suffix
        return name
