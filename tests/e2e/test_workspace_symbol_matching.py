"""workspace/symbol as editors query it: a name as far as it is typed, or any part of it.

VS Code and Neovim send the text typed so far and filter what comes back; a record the
server leaves out cannot be picked. The search language matches whole words only, so `dep`
or `ploy` alone would find nothing.
"""

from __future__ import annotations

from tests.e2e.editor_sessions import INLAY_HINTS, StartEditor, save
from tests.support.jsonrpc import RawClient


async def names(client: RawClient, query: str) -> list[str]:
    """The names of the symbols the engine answers query with, in its order."""
    return [symbol["name"] for symbol in await client.result("workspace/symbol", {"query": query})]


async def test_symbols_match_by_prefix_then_substring_ignoring_case(
    start_editor: StartEditor,
) -> None:
    save("deploy-steps", "How we ship")
    save("Release checklist", "Before tagging")
    save("oncall", "Who is on call; see the deploy notes")
    client = await start_editor(INLAY_HINTS)

    assert await names(client, "dep") == ["deploy-steps"]
    assert await names(client, "DEP") == ["deploy-steps"]
    assert await names(client, "ploy") == ["deploy-steps"]
    assert await names(client, "release ch") == ["Release checklist"]
    assert await names(client, "check") == ["Release checklist"]
    # Names matching as typed come first, then records the search finds by their words.
    assert await names(client, "deploy") == ["deploy-steps", "oncall"]
    assert await names(client, "c") == ["oncall", "Release checklist"]
