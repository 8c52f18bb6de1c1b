"""The error every command line shares: `lazy` itself, `lazy web`'s flags, the daemon's."""

from __future__ import annotations


class UsageError(Exception):
    """The command line itself is wrong (a missing file, conflicting flags): exit status 2."""
