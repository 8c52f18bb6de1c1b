"""Who writes in a test: one actor of each kind, so a test names the actor and never builds one."""

from __future__ import annotations

from lazy_memory.engine.identity import Identity
from lazy_memory.engine.records import Actor, ActorKind

ALICE = Actor(kind=ActorKind.HUMAN, detail="alice")
"""A human at the command line, the usual actor of a test."""

BOB = Actor(kind=ActorKind.HUMAN, detail="bob")
"""Another human, writing beside the one a test watches."""

BUILDER = Actor(kind=ActorKind.BUILDER, detail="builder-7")
"""A builder session."""

IMPORTER = Actor(kind=ActorKind.SYSTEM, detail="harness-import")
"""The importer of a harness's memory files, as `lazy import` attributes them."""

BUILDER_SESSION = Identity(actor=BUILDER)
"""The identity of BUILDER's session, which a service writes as."""
