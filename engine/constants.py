"""The constants more than one floor spells: record types, limits, page sizes, store files.

One module, importing nothing, so that what must start fast (the CLI's parser, the launch
hook, `lazy mcp`'s tool list, configuration) names them without the engine's models
(pydantic) and without a copy of its own to keep equal.
"""

from __future__ import annotations

RECORD_TYPE_NAMES = ("user", "feedback", "project", "reference")
"""The four kinds of knowledge a record holds, as stored: engine/kinds.py RecordType's values."""

MAX_BODY_BYTES = 64 * 1024
"""The default limit on an authored body's UTF-8 size (`[memory] max_body_bytes`)."""
DEFAULT_WARN_BYTES = 4096
"""The advisory size of the memory injected into a launch (`[memory] warn_bytes`)."""
TOOL_RESULT_LIMIT_CHARS = 500_000
"""The largest tool result the harness shows whole, at which lazy_memory_recall() pages the
section (`[claude_code] tool_result_limit_chars`): what a fitted section's last line counts,
and a page of `lazy/memory/context` unless asked."""

DEFAULT_SEARCH_LIMIT = 20
"""How many hits a search returns unless asked."""
MAX_SEARCH_LIMIT = 200
"""The most hits one search (or one page of hits) may ask for."""

SQLITE_FILE = "memory.db"
"""The SQLite store, in the data directory (with its -wal and -shm beside it)."""
HISTORY_FILE = "memory-history.json"
"""The files store's history: one history entry per line, the source of truth."""
CHECKPOINT_FILE = "memories.json"
"""The files store's checkpoint of the index over its history."""
COMPACT_FILE = "memory-compact.json"
"""The files store's compact slot."""
LAUNCH_LOG_FILE = "launches.jsonl"
"""The launch log, in the data directory: what each launch injected (adapters/launch/log.py)."""
