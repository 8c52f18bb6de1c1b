"""Corpus record templates about the codebase: project facts and where to look things up.

The PROJECT templates (deploys, migrations, ownership, caches, incidents, flags) and the
REFERENCE ones (dashboards, runbooks, design docs, vendor APIs), with the template shape they
and bench/corpus_templates_user.py share. Fields in braces are drawn by bench.corpus.
"""

from __future__ import annotations

from typing import NamedTuple

from lazy_memory.engine.records import RecordType


class Template(NamedTuple):
    type: RecordType
    name: str
    description: str
    body: str


def joined_lines(*lines: str) -> str:
    return "\n".join(lines)


CODEBASE_TEMPLATES = (
    Template(
        RecordType.PROJECT,
        "deploy-{env}-{sub.name}",
        "Deploy {sub.name} to {env} with `make deploy SERVICE={sub.name} ENV={env}` from main, "
        "only after CI is green",
        joined_lines(
            "The Makefile target tags the image, runs the migration job, then `helm upgrade`.",
            "**Why:** a hand-run `helm upgrade` in {month} skipped the migrations and broke "
            "{sub.name}.",
            "**How to apply:** confirm the main pipeline is green first, then:",
            "```sh",
            "make deploy SERVICE={sub.name} ENV={env}",
            "```",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "db-migrations-{sub.name}",
        "Schema changes to {sub.name} go through alembic in {sub.path}/migrations; never edit "
        "a migration that has shipped",
        joined_lines(
            "{sub.name} keeps its data in {sub.store}; each change is a new alembic revision.",
            "**Why:** shipped migrations already ran in {env}; editing one forks the history.",
            "**How to apply:** `alembic revision --autogenerate -m ...`, read the generated SQL, "
            "then `alembic upgrade head` locally before pushing.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-owns-{sub.entity_slug}",
        "The {sub.name} service owns the `{sub.entity}` table; other services read it only "
        "through the {sub.name} API",
        joined_lines(
            "The {sub.team} team runs {sub.name} and its {sub.store} schema.",
            "**Why:** direct cross-schema reads broke twice when `{sub.entity}` columns were "
            "renamed.",
            "**How to apply:** if {sub.upstream} needs this data, add an endpoint under "
            "{sub.path}/api instead of a join.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-events-topic",
        "{sub.name} publishes to kafka topic `{sub.topic}`; delivery is at-least-once, so "
        "consumers must be idempotent",
        joined_lines(
            "{sub.upstream} consumes it with its own consumer group.",
            "**Why:** redeliveries after a rebalance are normal; in {month} a duplicate event "
            "double-counted `{sub.entity}`.",
            "**How to apply:** dedupe on the `event_id` header before any side effect.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-redis-cache",
        "{sub.name} caches `{sub.entity}` lookups in redis for {minutes} minutes; every write "
        "must call `invalidate_{sub.module}_cache()`",
        joined_lines(
            "Keys look like `{sub.name}:{sub.entity}:<id>`.",
            "**Why:** stale reads after updates were the top support complaint before "
            "invalidation existed.",
            "**How to apply:** call the helper after the transaction commits, never before.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "flaky-test-{sub.name}-{flake.slug}",
        "test_{sub.module}_{flake.test} is flaky under pytest-xdist (it {flake.cause}); rerun "
        "it alone before blaming your change",
        joined_lines(
            "Known flake, tracked in {ticket}.",
            "**Why:** several sessions lost an hour bisecting it as a regression.",
            "**How to apply:** `pytest {sub.path}/tests -k {flake.test} -p no:xdist` to confirm; "
            "the real fix is to {flake.fix}.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-config-env",
        "{sub.name} reads settings from `{sub.env_prefix}_*` environment variables; local "
        "defaults live in {sub.path}/.env.example",
        joined_lines(
            "pydantic-settings parses them once at startup in `{sub.path}/settings.py`.",
            "**Why:** secrets come from vault in {env} and must never be committed.",
            "**How to apply:** add a new variable to the settings class and to .env.example "
            "in the same PR.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-migrating-{migration.slug}",
        "{sub.name} is moving from {migration.old} to {migration.new}; new code uses "
        "{migration.new}, old callers stay until {quarter.label}",
        joined_lines(
            "Tracked in {ticket}; about half of {sub.path} is converted.",
            "**Why:** a one-PR conversion was tried and reverted as too risky for a live service.",
            "**How to apply:** touch {migration.old} code only to fix bugs; anything new or "
            "rewritten uses {migration.new}.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "incident-{month}-{sub.name}-{failure.slug}",
        "{month} incident: {sub.name} hit {failure.phrase}; fixed by {failure.fix}, follow-up "
        "in {ticket}",
        joined_lines(
            "Postmortem: docs/postmortems/{month}-{sub.name}.md",
            "**Why it matters:** {sub.upstream} has the same failure mode and no fix yet.",
            "**How to apply:** keep the fix and its alert in place when refactoring {sub.name}.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-local-dev",
        "Run {sub.name} locally with `docker compose up {sub.name} {sub.store}` and seed it with "
        "`make seed-{sub.name}`",
        joined_lines(
            "It listens on localhost:{sub.port}; the compose file is at the repository root.",
            "**Why:** the shared dev cluster is often broken and slow to redeploy.",
            "**How to apply:** rerun the seed target after every `docker compose down -v`.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-ownership",
        "The {sub.team} team owns {sub.name}; ask in {sub.channel} before changing its public "
        "API or its {sub.store} schema",
        joined_lines(
            "Code owners for {sub.path} are in .github/CODEOWNERS; their review is required.",
            "**Why:** {sub.upstream} depends on the {sub.name} API and broke on an unannounced "
            "change in {month}.",
            "**How to apply:** open the PR early as a draft and link it in {sub.channel}.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-rate-limit",
        "The gateway limits {sub.name} to {rps} requests/s per tenant; bulk jobs must use the "
        "batch endpoint",
        joined_lines(
            "Limits live in the api-gateway config under `routes.{sub.module}`.",
            "**Why:** a backfill in {month} throttled real customers for an hour.",
            "**How to apply:** send `{sub.entity}` in batches of at most 500 to "
            "`POST /v1/{sub.entity}:batch`.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "release-freeze-{quarter.slug}-{sub.name}",
        "Code freeze on {sub.name} before the {quarter.label} launch; only hotfixes approved by "
        "a {sub.team} lead get merged",
        joined_lines(
            "The window is announced in {sub.channel}; the release branch is cut the Monday "
            "before.",
            "**Why:** the launch demo runs on {env} and must not move under the presenters.",
            "**How to apply:** keep feature work on branches and rebase after the freeze.",
        ),
    ),
    Template(
        RecordType.PROJECT,
        "{sub.name}-flag-{flag.slug}",
        "{sub.name} work on {flag.label} ships behind the `{sub.module}_{flag.key}` flag, now on "
        "for {percent}% of tenants",
        joined_lines(
            "Flags live in LaunchDarkly; new tenants default to off.",
            "**Why:** it changes how `{sub.entity}` is written and must be reversible without "
            "a deploy.",
            "**How to apply:** guard every new path with the flag; removal is {ticket}.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "grafana-dashboard-{sub.name}-{metric.slug}",
        "Grafana dashboard for {sub.name} {metric.phrase}: "
        "https://grafana.internal.example.com/d/{uid}/{sub.name}-{metric.slug}",
        joined_lines(
            "Panels: p50/p95/p99 per endpoint, split by region.",
            "First stop when {sub.name} alerts fire in {sub.channel}.",
            "Alert thresholds are in `monitoring/alerts/{sub.name}.yaml`.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "sentry-{sub.name}",
        "Sentry project for {sub.name} errors: "
        "https://sentry.example.com/organizations/acme/issues/?project={sub.name}",
        joined_lines(
            "Filter by `environment:{env}`; releases are tagged with the git SHA.",
            "Issues assigned to {sub.team} page nobody; triage them weekly.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "runbook-{sub.name}-{failure.slug}",
        "Runbook for {failure.phrase} in {sub.name}: docs/runbooks/{sub.name}/{failure.slug}.md",
        joined_lines(
            "Covers the safe restart order, the knobs that are safe to turn, and who to page.",
            "Written after the {month} incident; the lasting fix was {failure.fix}.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "design-doc-{sub.name}-{flag.slug}",
        "Design doc for {flag.label} in {sub.name}: "
        "https://docs.example.com/design/{sub.name}-{flag.slug}",
        joined_lines(
            "Approved in {month}; the open questions section is still accurate.",
            "Read it before changing how {sub.name} stores `{sub.entity}`.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "{vendor.slug}-api-{sub.name}",
        "{vendor.label} API reference, used by {sub.name} for {vendor.use}: {vendor.url}",
        joined_lines(
            "Our client wrapper is `{sub.path}/clients/{vendor.slug}.py`; use it, not raw HTTP.",
            "Sandbox credentials are in vault under `{env}/{sub.name}/{vendor.slug}`.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "oncall-{sub.team}",
        "PagerDuty schedule for the {sub.team} on-call, which covers {sub.name}: "
        "https://acme.pagerduty.com/schedules#{uid}",
        joined_lines(
            "Escalation goes to the {sub.team} lead after 15 minutes.",
            "Handover notes are pinned in {sub.channel}.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "linear-{sub.name}",
        "Linear project {ticket_key} tracks {sub.name} work; bugs get the `{sub.name}` label and "
        "go to triage",
        joined_lines(
            "Board: https://linear.app/acme/project/{sub.name}-{uid}",
            "Link the ticket id in the PR title so the issue moves on merge.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "{tool.name}-config-location",
        "{tool.name} configuration for the monorepo lives in `{tool.config}`; per-service "
        "overrides are not allowed",
        joined_lines(
            "The CI job runs `{tool.command}` with exactly that config.",
            "Change it in its own PR and tag the platform team.",
        ),
    ),
    Template(
        RecordType.REFERENCE,
        "openapi-spec-{sub.name}",
        "OpenAPI spec for {sub.name}: {sub.path}/openapi.yaml, rendered at "
        "https://api-docs.internal.example.com/{sub.name}",
        joined_lines(
            "Generated from the route decorators by `make openapi`; do not edit it by hand.",
            "CI fails if the committed spec is stale.",
        ),
    ),
)
