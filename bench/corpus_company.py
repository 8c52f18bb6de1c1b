"""The invented company a corpus is about: its subsystems, their teams and datastores.

Each seed assigns every subsystem an owning team, a datastore, a path and an upstream service,
and orders them most talked-about first. Private to bench.corpus.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Subsystem:
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


def invented_company(rng: random.Random) -> list[Subsystem]:
    """The seed's subsystems, most talked-about first."""
    subsystems = [
        Subsystem(
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
