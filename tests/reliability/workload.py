"""The load test's clients: a mix of saves, recalls, searches and context renders over JSON-RPC.

Each client writes names of its own (only it writes them, so it knows what a recall of one
must return) and names every client shares (so compare-and-swap saves race and conflict).
Every acknowledged save is kept for the check against the history; every error is counted
by kind. A Conflict is expected only for a save with `if_revision`: for a fresh revision
read just before (another client may win the race), and always for a stale one.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.reliability.rss import RssSeries, sample_rss
from tests.reliability.store_checks import Acknowledged
from tests.support.jsonrpc import RawClient

SHARED_NAMES = [f"shared-{number}" for number in range(8)]
OWN_NAMES = 12
"""Names per client: the live records stay bounded, so memory need not grow with them."""
TYPES = ("user", "feedback", "project", "reference")
_SYLLABLES = ("ka", "lo", "mi", "ren", "to", "vas", "qui", "dor", "pel", "sun", "ar", "bex")
VOCABULARY = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("n", "s", "")})
CONFLICT = "Conflict"

# How often each operation comes up, out of their sum.
_MIX = {
    "save": 30,
    "save_if_fresh": 8,
    "save_if_stale": 2,
    "recall": 15,
    "index": 10,
    "search": 20,
    "context": 15,
}


@dataclass
class Tally:
    """What every client did: requests by kind, conflicts, unexpected errors, acknowledgements."""

    requests: Counter[str] = field(default_factory=Counter)
    conflicts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    acknowledged: list[Acknowledged] = field(default_factory=list)

    def unexpected(self, what: str, detail: object) -> None:
        """Count an error the store must never give under load, keeping a few to show."""
        self.errors[what] += 1
        if len(self.error_examples) < 5:
            self.error_examples.append(f"{what}: {detail}")


@dataclass
class LoadReport:
    """A finished run: the tally, how long the load ran, and every process's RSS samples."""

    tally: Tally
    seconds: float
    rss: list[RssSeries]
    warm_up: float


class LoadClient:
    """One connection working through the mix until a deadline."""

    def __init__(self, name: str, client: RawClient, randomness: random.Random, tally: Tally):
        self.name = name
        self.client = client
        self.randomness = randomness
        self.tally = tally
        self.own: dict[str, Acknowledged] = {}

    async def run(self, deadline: float) -> None:
        """Pick operations from the mix until the deadline (or the connection is lost)."""
        kinds, weights = list(_MIX), list(_MIX.values())
        while time.monotonic() < deadline:
            kind = self.randomness.choices(kinds, weights)[0]
            try:
                await getattr(self, kind)()
            except TimeoutError:
                self.tally.unexpected(f"{kind}: no answer in time", "")
            except ConnectionError as error:
                self.tally.unexpected(f"{kind}: connection lost", error)
                return

    async def save(self) -> None:
        """A plain save of an own or a shared name (no compare-and-swap: it always wins)."""
        name = self.own_name() if self.randomness.random() < 0.5 else self.shared_name()
        response = await self.request("save", "lazy/memory/save", self.content(name))
        if "result" in response:
            self.acknowledge(response["result"])
        else:
            self.tally.unexpected(f"save: {kind_of(response)}", response["error"])

    async def save_if_fresh(self) -> None:
        """Read a shared name's revision, then save only if it is still that one."""
        name = self.shared_name()
        revision = await self.revision_of(name)
        if revision is None:
            return
        params = {**self.content(name), "if_revision": revision}
        response = await self.request("save with if_revision", "lazy/memory/save", params)
        if "result" in response:
            if response["result"]["revision"] != revision + 1:
                self.tally.unexpected("save with if_revision: wrong revision", response["result"])
            self.acknowledge(response["result"])
        elif kind_of(response) == CONFLICT:
            self.tally.conflicts["lost the race"] += 1
        else:
            self.tally.unexpected(f"save with if_revision: {kind_of(response)}", response)

    async def save_if_stale(self) -> None:
        """A save with a revision already superseded: a Conflict every time."""
        name = self.shared_name()
        revision = await self.revision_of(name)
        if revision is None:
            return
        params = {**self.content(name), "if_revision": revision - 1}
        response = await self.request("save with if_revision", "lazy/memory/save", params)
        if kind_of(response) == CONFLICT:
            self.tally.conflicts["stale revision"] += 1
        elif "result" in response:
            self.tally.unexpected("save with a stale if_revision was accepted", response["result"])
        else:
            self.tally.unexpected(f"save with if_revision: {kind_of(response)}", response)

    async def recall(self) -> None:
        """One record in full; an own name must read back exactly as this client last saved it."""
        if self.own and self.randomness.random() < 0.6:
            name = self.randomness.choice(sorted(self.own))
        else:
            name = self.shared_name()
        response = await self.request("recall", "lazy/memory/recall", {"name": name})
        if "error" in response:
            self.tally.unexpected(f"recall: {kind_of(response)}", response["error"])
            return
        record = response["result"]["record"]
        mine = self.own.get(name)
        if mine is not None and (record["revision"], record["body"]) != (mine.revision, mine.body):
            self.tally.unexpected("recall: not the client's own last save", name)

    async def index(self) -> None:
        """The index of live records: every name saved so far is in it."""
        response = await self.request("index", "lazy/memory/recall", {})
        if "error" in response:
            self.tally.unexpected(f"index: {kind_of(response)}", response["error"])
            return
        names = {record["name"] for record in response["result"]["records"]}
        if not set(self.own) | set(SHARED_NAMES) <= names:
            self.tally.unexpected("index: a saved record is missing", sorted(set(self.own) - names))

    async def search(self) -> None:
        """A search of one or two words, a phrase, or words and a type filter."""
        words = self.randomness.sample(VOCABULARY, 2)
        query = self.randomness.choice(
            [
                words[0],
                " ".join(words),
                f'"{" ".join(words)}"',
                f"{words[0]} type:{self.randomness.choice(TYPES)}",
            ]
        )
        limit = self.randomness.choice([5, 20])
        params = {"query": query, "limit": limit}
        response = await self.request("search", "lazy/search", params)
        if "error" in response:
            self.tally.unexpected(f"search: {kind_of(response)}", response["error"])
        elif len(response["result"]["hits"]) > limit:
            self.tally.unexpected("search: more hits than the limit", query)

    async def context(self) -> None:
        """The launch context of a builder or an agent: available, never the marker."""
        role = self.randomness.choice(["builder", "agent"])
        response = await self.request("context", "lazy/memory/context", {"role": role})
        if "error" in response:
            self.tally.unexpected(f"context: {kind_of(response)}", response["error"])
        elif not response["result"]["available"]:
            self.tally.unexpected("context: unavailable", response["result"]["text"][:200])

    async def revision_of(self, name: str) -> int | None:
        response = await self.request("recall", "lazy/memory/recall", {"name": name})
        if "error" in response:
            self.tally.unexpected(f"recall: {kind_of(response)}", response["error"])
            return None
        revision: int = response["result"]["record"]["revision"]
        return revision

    async def request(self, kind: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.tally.requests[kind] += 1
        return await self.client.request(method, params)

    def acknowledge(self, record: dict[str, Any]) -> None:
        saved = Acknowledged(record["name"], record["revision"], record["body"], self.name)
        self.tally.acknowledged.append(saved)
        if not saved.name.startswith("shared-"):
            self.own[saved.name] = saved

    def own_name(self) -> str:
        return f"{self.name}-{self.randomness.randrange(OWN_NAMES)}"

    def shared_name(self) -> str:
        return self.randomness.choice(SHARED_NAMES)

    def content(self, name: str) -> dict[str, Any]:
        words = self.randomness.choices(VOCABULARY, k=self.randomness.randint(5, 300))
        return {
            "name": name,
            "type": self.randomness.choice(TYPES),
            "description": f"{self.name} on {' '.join(words[:4])}",
            "body": " ".join(words),
        }


async def run_load(
    clients: dict[str, RawClient], seconds: float, pids: list[int], seed: str
) -> LoadReport:
    """Seed the shared names, then run every client through the mix for seconds at once,
    sampling each pid's RSS all along; the first quarter counts as warm-up."""
    tally = Tally()
    randomness = random.Random(seed)
    workers = [
        LoadClient(name, client, random.Random(randomness.random()), tally)
        for name, client in clients.items()
    ]
    for name in SHARED_NAMES:
        first = workers[0]
        response = await first.request("save", "lazy/memory/save", first.content(name))
        assert "result" in response, response
        first.acknowledge(response["result"])
    series = [RssSeries(pid) for pid in pids]
    done = asyncio.Event()
    sampling = asyncio.ensure_future(sample_rss(series, min(max(seconds / 80, 0.2), 2.0), done))
    began = time.monotonic()
    try:
        await asyncio.gather(*(worker.run(began + seconds) for worker in workers))
    finally:
        done.set()
        await sampling
    return LoadReport(tally, time.monotonic() - began, series, warm_up=seconds / 4)


def kind_of(response: dict[str, Any]) -> str:
    """An error response's type (`Conflict`, `StorageUnavailable`, ...) or its code."""
    error = response.get("error") or {}
    data = error.get("data")
    if isinstance(data, dict) and "type" in data:
        return str(data["type"])
    return f"code {error.get('code')}"
