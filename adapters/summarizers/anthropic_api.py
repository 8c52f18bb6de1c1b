"""The `anthropic` summarizer: one Messages API call through the official SDK.

The SDK reads its own environment: `ANTHROPIC_API_KEY` for the credential and
`ANTHROPIC_BASE_URL` for the endpoint. It is imported only when a summary is asked for,
because importing it takes seconds and most commands never need a model.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

from lazy_memory.adapters.config import Settings
from lazy_memory.engine.errors import LLMUnavailable

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

MAX_ANSWER_TOKENS = 4096
DEFAULT_MAX_RETRIES = 2
NOT_A_MESSAGE = "the Anthropic API answered with something that is not a Messages API message"


class AnthropicSummarizer:
    """A Summarizer that asks an Anthropic model, with the SDK retrying 429s and 5xxs."""

    def __init__(self, settings: Settings, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.name = "anthropic"
        self.model = settings.compact_model
        self._timeout_seconds = settings.compact_timeout_seconds
        self._max_retries = max_retries

    def known_failure(self) -> str | None:
        """Why a call would fail before reaching the API (no credential), else None."""
        if not os.environ.get("ANTHROPIC_API_KEY"):
            return "no ANTHROPIC_API_KEY is set: export one, or set [compact] command in lazy.toml"
        return None

    async def summarize(self, prompt: str) -> str:
        """The model's answer to prompt, as text; any failure raises LLMUnavailable."""
        failure = self.known_failure()
        if failure is not None:
            raise LLMUnavailable(failure)
        from anthropic import AnthropicError, AsyncAnthropic

        # The client's timeout bounds each attempt; this one bounds the attempts and the
        # SDK's backoff between them, so the setting means what a user reads it as.
        try:
            async with (
                asyncio.timeout(self._timeout_seconds),
                AsyncAnthropic(
                    timeout=self._timeout_seconds, max_retries=self._max_retries
                ) as client,
            ):
                message = await client.messages.create(
                    model=self.model,
                    max_tokens=MAX_ANSWER_TOKENS,
                    messages=[{"role": "user", "content": prompt}],
                )
        except (AnthropicError, TimeoutError, json.JSONDecodeError) as error:
            raise LLMUnavailable(self._reason(error)) from None
        return _answer_text(message)

    def _reason(self, error: anthropic.AnthropicError | TimeoutError | json.JSONDecodeError) -> str:
        """One line saying what went wrong with the API call, for the user to act on."""
        import anthropic

        if isinstance(error, json.JSONDecodeError):
            return NOT_A_MESSAGE
        if isinstance(error, TimeoutError | anthropic.APITimeoutError):
            return f"the Anthropic API timed out after {self._timeout_seconds:g} s"
        if isinstance(error, anthropic.APIConnectionError):
            return f"cannot connect to {error.request.url}: {error.__cause__ or error}"
        if isinstance(error, anthropic.RateLimitError):
            return f"the Anthropic API rate limited the request (429): {_api_message(error)}"
        if isinstance(error, anthropic.AuthenticationError):
            return f"the Anthropic API rejected the API key (401): {_api_message(error)}"
        if isinstance(error, anthropic.APIStatusError):
            return f"the Anthropic API answered {error.status_code}: {_api_message(error)}"
        return f"the Anthropic API call failed: {error}"


def _answer_text(message: Message) -> str:
    """The text blocks of an answer, joined; LLMUnavailable if there is no usable text."""
    # The SDK does not validate a 200 answer: a proxy behind ANTHROPIC_BASE_URL can send
    # an HTML page or other JSON, and it arrives here as a string or a hollow Message.
    if getattr(message, "type", None) != "message" or not isinstance(message.content, list):
        raise LLMUnavailable(NOT_A_MESSAGE)
    if message.stop_reason == "max_tokens":
        raise LLMUnavailable(
            f"the model's answer was cut off at the {MAX_ANSWER_TOKENS}-token limit"
        )
    answer = "".join(block.text for block in message.content if block.type == "text")
    if not answer.strip():
        raise LLMUnavailable("the model returned an empty answer")
    return answer


def _api_message(error: anthropic.APIStatusError) -> str:
    """The `error.message` of an Anthropic error body, else the body, on one line."""
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"].get("message", body)
    return " ".join(str(body).split())
