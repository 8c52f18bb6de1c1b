"""The engine's default size limits, in a module that imports nothing.

adapters/config.py takes its defaults for `[memory]` from here, so reading the configuration
(on the launch hook's path) imports none of the models.
"""

from __future__ import annotations

MAX_BODY_BYTES = 64 * 1024
"""The default limit on an authored body's UTF-8 size (`[memory] max_body_bytes`)."""
DEFAULT_WARN_BYTES = 4096
"""The advisory size of the memory injected into a launch (`[memory] warn_bytes`)."""
TOOL_RESULT_LIMIT_CHARS = 500_000
"""The largest tool result the harness shows whole, at which lazy_memory_recall() pages the
section (`[claude_code] tool_result_limit_chars`): what a fitted section's last line counts."""
