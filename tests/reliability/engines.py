"""`lazy engine` processes on stdio for a test, never left running after it, pass or fail."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from tests.support.jsonrpc import RawClient

SpawnEngine = Callable[[Mapping[str, str], Path], Awaitable[RawClient]]
"""Start `lazy engine` with this environment, its stderr in this file; a raw client on it."""
