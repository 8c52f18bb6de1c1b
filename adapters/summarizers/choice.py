"""Choose the summarizer compaction uses, from configuration, without importing any SDK."""

from __future__ import annotations

from lazy_memory.adapters.config import Settings
from lazy_memory.adapters.summarizers.anthropic_api import AnthropicSummarizer
from lazy_memory.adapters.summarizers.command import CommandSummarizer
from lazy_memory.engine.errors import LLMUnavailable
from lazy_memory.engine.ports import Summarizer

OFFLINE = "LAZY_OFFLINE=1: no model calls"


class OfflineSummarizer:
    """A Summarizer that refuses every call (LAZY_OFFLINE=1), naming the one it stands in for."""

    def __init__(self, configured: Summarizer) -> None:
        self.name = configured.name
        self.model = configured.model

    async def summarize(self, prompt: str) -> str:
        """Never an answer: raises LLMUnavailable without any model call."""
        raise LLMUnavailable(OFFLINE)

    def known_failure(self) -> str:
        """Always the same: no call is ever made."""
        return OFFLINE


def open_summarizer(settings: Settings) -> Summarizer:
    """The configured summarizer: `[compact] command` if set, else Anthropic; none if offline."""
    configured: Summarizer = (
        CommandSummarizer(settings, settings.compact_command)
        if settings.compact_command
        else AnthropicSummarizer(settings)
    )
    return OfflineSummarizer(configured) if settings.offline else configured
