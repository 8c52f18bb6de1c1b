"""Records and compacts as a test writes them, each field defaulted to a plain value."""

from __future__ import annotations

from collections.abc import Mapping

from lazy_memory.engine.compact import Compact
from lazy_memory.engine.records import RecordContent, RecordType
from tests.support.actors import ALICE
from tests.support.clocks import T0


def content(
    name: str = "deploy-steps",
    description: str = "How we deploy",
    body: str = "Run make deploy.",
    type: RecordType = RecordType.PROJECT,
) -> RecordContent:
    """What a save of name writes."""
    return RecordContent(name=name, type=type, description=description, body=body)


def compact(
    summary: str = "- alpha",
    watermark: Mapping[str, int] | None = None,
    preamble: str = "Memory summary",
) -> Compact:
    """A mechanical compact ALICE generated at T0, having seen watermark (alpha's revision 1)."""
    return Compact(
        preamble=preamble,
        summary=summary,
        generator="mechanical",
        generated_at=T0,
        generated_by=ALICE,
        watermark=dict(watermark) if watermark is not None else {"alpha": 1},
    )
