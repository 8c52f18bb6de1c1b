"""The search relevance set: a realistic store, and queries with the records that should top them.

The store is the benchmark corpus (bench/corpus.py, fixed seed) plus hand-written records of
the kind sessions save that the templates do not make. Each judgement names every record a
reader would accept as the first answer (the corpus repeats some records under `-2` names,
and those count alike). tests/conformance/test_search_relevance.py holds every backend to a
minimum quality on it; `python -m bench.search` reports the scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bench.corpus import realistic_records
from lazy_memory.engine.records import RecordContent, RecordType

CORPUS_SEED = 2026
CORPUS_SIZE = 220
RANKED_HITS = 10
"""How deep a search's hits are read: a relevant record below this counts as not found."""

HAND_WRITTEN = (
    RecordContent(
        name="credentials-rotation",
        type=RecordType.PROJECT,
        description="Service credentials live in vault and rotate every 90 days; never paste "
        "them into code, tickets or chat",
        body="Each service reads its credentials from vault at startup.\n"
        "**Why:** a leaked key in a ticket in 2025-04 had to be rotated by hand everywhere.\n"
        "**How to apply:** ask for a vault path, never for the secret itself.",
    ),
    RecordContent(
        name="staging-db-access",
        type=RecordType.REFERENCE,
        description="How to reach the staging postgres: the bastion host and a password vault "
        "issues for an hour",
        body="`ssh bastion.staging.example.com`, then `vault read database/creds/staging-ro`.\n"
        "Read-only by default; write access needs a ticket.",
    ),
    RecordContent(
        name="pgbouncer-settings",
        type=RecordType.PROJECT,
        description="pgbouncer runs in transaction mode in front of every postgres; session "
        "features such as prepared statements and advisory locks break",
        body="Use `statement_cache_size=0` in asyncpg and no session-level SET.\n"
        "**Why:** transaction pooling is what keeps connection counts down.",
    ),
    RecordContent(
        name="ci-pipeline-layout",
        type=RecordType.REFERENCE,
        description="CI runs in GitHub Actions: lint, unit, integration, then deploy; the "
        "workflows are in .github/workflows",
        body="The integration job needs the `db` service container; it takes about 12 minutes.",
    ),
    RecordContent(
        name="feature-flag-cleanup",
        type=RecordType.FEEDBACK,
        description="Remove a LaunchDarkly flag within two weeks of reaching 100% of tenants",
        body="Stale flags pile up and nobody remembers what they guard.\n"
        "**How to apply:** open the removal PR as soon as the rollout completes.",
    ),
    RecordContent(
        name="timezone-handling",
        type=RecordType.FEEDBACK,
        description="Store and compare times in UTC; convert to the user's time zone only when "
        "rendering",
        body="**Why:** a daylight-saving bug double-billed tenants in 2025-03.\n"
        "**How to apply:** timezone-aware datetimes everywhere, `datetime.now(UTC)`.",
    ),
    RecordContent(
        name="monorepo-layout",
        type=RecordType.PROJECT,
        description="services/, apps/ and backend/ hold the services; libs/ holds the code they "
        "share; tools/ holds scripts",
        body="A service may import from libs/ but never from another service's folder.",
    ),
    RecordContent(
        name="load-testing",
        type=RecordType.REFERENCE,
        description="k6 load tests live in perf/; run them against preview, never production",
        body="`k6 run perf/checkout.js` with `BASE_URL` set to the preview environment.\n"
        "Results go to the Grafana k6 dashboard.",
    ),
    RecordContent(
        name="data-retention",
        type=RecordType.PROJECT,
        description="Raw events are kept 30 days, aggregates two years; GDPR deletion requests "
        "go through the privacy API",
        body="The nightly purge job lives in services/ingest/purge.py.\n"
        "**Why:** legal signed off on these periods in 2025-09.",
    ),
    RecordContent(
        name="user-prefers-british-spelling",
        type=RecordType.USER,
        description="The user writes British English: colour, behaviour, licence in docs and "
        "comments",
        body="They fix American spellings in review.",
    ),
    RecordContent(
        name="api-versioning",
        type=RecordType.PROJECT,
        description="Public APIs are versioned in the path (/v1, /v2); a breaking change needs "
        "a new version and six months of overlap",
        body="Deprecations are announced in the changelog and with a Sunset header.",
    ),
    RecordContent(
        name="dependency-upgrades",
        type=RecordType.FEEDBACK,
        description="Merge Renovate's patch upgrades when CI is green; minor and major "
        "upgrades need a human read of the changelog",
        body="**Why:** a minor upgrade of the ORM changed default isolation levels.",
    ),
)

QUERIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ('in:memories "credentials"', ("credentials-rotation", "auth-owns-credentials")),
    ("deploy api-gateway production", ("deploy-production-api-gateway",)),
    ("deploy email qa", ("deploy-qa-email",)),
    ("runbook redis evictions exports", ("runbook-exports-redis-evictions",)),
    ("postgres connection exhaustion ledger", ("runbook-ledger-db-connections",)),
    (
        '"wall clock" flaky',
        (
            "flaky-test-geo-wall-clock",
            "flaky-test-invoicing-wall-clock",
            "flaky-test-pricing-wall-clock",
        ),
    ),
    ("conventional commits", ("commit-messages-conventional",)),
    ("commit ticket id", ("commit-messages-ticket-prefix", "commit-messages-ticket-prefix-2")),
    ('"vs code"', ("user-editor-vscode",)),
    ("new to go", ("user-knows-python-new-to-go", "user-knows-python-new-to-go-2")),
    ("kotlin", ("user-knows-java-new-to-kotlin",)),
    ("force push", ("ask-before-force-push", "ask-before-force-push-2")),
    ("polars pandas", ("prefer-polars-over-pandas",)),
    ("lock file reproducible", ("prefer-uv-over-pip",)),
    ("grafana email error rate", ("grafana-dashboard-email-error-rate",)),
    ("sentry media-pipeline", ("sentry-media-pipeline",)),
    ("pagerduty growth", ("oncall-growth",)),
    ("openapi pricing", ("openapi-spec-pricing",)),
    ("celery temporal", ("sync-worker-migrating-celery-to-temporal",)),
    ("release freeze geo", ("release-freeze-2025-q4-geo",)),
    ("webhooks rate limit", ("webhooks-rate-limit",)),
    ("OOM kills", ("incident-2025-06-webhooks-oom-kills",)),
    (
        "failing test first",
        ("working-style-bugfix-test-first", "working-style-bugfix-test-first-2"),
    ),
    ("sqlalchemy onboarding", ("onboarding-migrating-sqlalchemy-2",)),
    ("docker compose checkout", ("checkout-local-dev", "checkout-local-dev-2")),
    ("structlog search", ("logging-search",)),
    ("name:design-doc* bulk export", ("design-doc-inventory-bulk-export",)),
    ("kafka topic email", ("email-events-topic",)),
    (
        "type:user python",
        (
            "user-knows-ruby-new-to-python",
            "user-knows-ruby-new-to-python-2",
            "user-knows-ruby-new-to-python-3",
        ),
    ),
    ("vault", ("credentials-rotation", "staging-db-access")),
    ("pgbouncer", ("pgbouncer-settings",)),
    ("k6 load tests", ("load-testing",)),
    ("GDPR deletion", ("data-retention",)),
    ("UTC time zone", ("timezone-handling",)),
    ("staging database bastion", ("staging-db-access",)),
    ("renovate upgrades", ("dependency-upgrades",)),
    ("british spelling", ("user-prefers-british-spelling",)),
    ("breaking change api version", ("api-versioning",)),
    ("prepared statements", ("pgbouncer-settings",)),
    ("kafka backlog", ("runbook-api-gateway-queue-backlog", "runbook-audit-log-queue-backlog")),
    # Phrased as people ask, or needing a stem: all words must match and nothing is stemmed,
    # so these show what the language cannot do yet.
    ("who owns webhooks", ("webhooks-ownership", "webhooks-ownership-2")),
    ("secrets", ("credentials-rotation",)),
    (
        "schema change",
        (
            "db-migrations-ingest",
            "db-migrations-media-pipeline",
            "db-migrations-onboarding",
            "db-migrations-webhooks",
            "db-migrations-webhooks-2",
            "db-migrations-webhooks-3",
            "db-migrations-webhooks-4",
            "db-migrations-webhooks-5",
        ),
    ),
)
"""Each query, and the records that may rank first for it."""


def relevance_records() -> list[RecordContent]:
    """The store the queries are judged against."""
    return [*realistic_records(CORPUS_SIZE, CORPUS_SEED), *HAND_WRITTEN]


@dataclass(frozen=True)
class Quality:
    """How well a backend ranked the set: mean reciprocal rank and top-1 and top-3 hit rates."""

    mean_reciprocal_rank: float
    top1: float
    top3: float
    misses: tuple[str, ...]
    """The queries whose first relevant record was not first."""


def first_relevant_rank(ranked: Sequence[str], relevant: Sequence[str]) -> int | None:
    """The 1-based rank of the first relevant name within RANKED_HITS, or None."""
    for rank, name in enumerate(ranked[:RANKED_HITS], start=1):
        if name in relevant:
            return rank
    return None


def quality(ranked: Mapping[str, Sequence[str]]) -> Quality:
    """Score the names each query returned, best first, against QUERIES."""
    ranks = {query: first_relevant_rank(ranked[query], relevant) for query, relevant in QUERIES}
    count = len(QUERIES)
    return Quality(
        mean_reciprocal_rank=sum(1 / rank for rank in ranks.values() if rank) / count,
        top1=sum(rank == 1 for rank in ranks.values()) / count,
        top3=sum(rank is not None and rank <= 3 for rank in ranks.values()) / count,
        misses=tuple(query for query, rank in ranks.items() if rank != 1),
    )
