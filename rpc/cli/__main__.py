"""`python -m lazy_memory.rpc.cli` runs the `lazy` command."""

from __future__ import annotations

import sys

from lazy_memory.rpc.cli import main

sys.exit(main())
