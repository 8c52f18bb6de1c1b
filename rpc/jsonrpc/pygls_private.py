"""Every use the engine makes of pygls's private attributes, each saying what it is for.

pygls 2.x (pyproject.toml: pygls<3) has no public way to see what a client sent that is
still running, to know that a connection was shut down, to reach the server from its
protocol, or to take part in how an answer is sent and a method's handler found. Each private
name is used in this module only, so a pygls upgrade is checked here; the engine's and the
daemon's end-to-end tests and tests/unit/test_encoded.py exercise every one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pygls.protocol import LanguageServerProtocol


def in_flight(protocol: LanguageServerProtocol) -> list[Any]:
    """What pygls holds of what the client sent: each request's task until it is answered
    (annotated as a concurrent.futures.Future, it holds asyncio tasks for async handlers),
    and the server's own requests to the client, which only the client can end."""
    # _request_futures: pygls's book of messages in flight (JsonRPCProtocol.__init__).
    return list(protocol._request_futures.values())


def forget_finished(protocol: LanguageServerProtocol) -> None:
    """Drop what has finished from pygls's book of messages in flight."""
    # _request_futures: pygls files every notification's handler under a fresh id and never
    # removes it (only requests are removed, when answered): without this a connection that
    # lives for hours keeps every didChange it was sent.
    futures = protocol._request_futures
    for done in [key for key, future in futures.items() if future.done()]:
        del futures[done]


def is_shut_down(protocol: LanguageServerProtocol) -> bool:
    """True once the client has sent shutdown."""
    # _shutdown: set by LSP's shutdown handler, read by pygls's exit handler.
    return bool(protocol._shutdown)


def mark_shut_down(protocol: LanguageServerProtocol) -> None:
    """Record that the client sent shutdown, as pygls's own shutdown handler does."""
    # _shutdown: the flag pygls's exit handler reads to tell a clean exit from another.
    protocol._shutdown = True


class HookedProtocol(LanguageServerProtocol):
    """pygls's LSP protocol, with the private steps the engine takes part in made hooks:
    `answered` as each answer is sent, `sent_own_way` for each message, `own_handler` for
    each method; and `owner`, the server it serves, and `refuse`, to answer with an error."""

    @property
    def owner(self) -> Any:
        """The server this protocol serves."""
        # _server: set by JsonRPCProtocol.__init__; the protocol has no public way to it.
        return self._server

    def answered(self) -> None:
        """Called as each answer to a request is sent, handled or refused."""

    def sent_own_way(self, data: Any, serialize: Callable[[Any], Any]) -> bool:
        """Send data (with serialize, pygls's default for what json cannot dump) and say True,
        or say False and pygls sends it."""
        return False

    def own_handler(self, method: str) -> Any:
        """The handler of method, or None for the one registered with pygls."""
        return None

    def refuse(self, message_id: Any, error: Any) -> None:
        """Answer the request message_id with error (a ResponseError) without running it."""
        # _send_response: pygls's one way to answer a request, otherwise called only with
        # what a handler returned or raised.
        self._send_response(message_id, error=error)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # _send_response: every answer to a request passes here.
        self.answered()
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        # _send_data: every message sent passes here; _serialize_message is the default
        # pygls's json.dumps is given for its attrs messages.
        if not self.sent_own_way(data, self._serialize_message):
            super()._send_data(data)

    def _get_handler(self, feature_name: str) -> Any:
        # _get_handler: pygls's lookup of a method's handler among those registered with it.
        return self.own_handler(feature_name) or super()._get_handler(feature_name)
