"""What every database backend's schema migrations share: their shape and the version check."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from lazy_memory.engine.errors import StorageUnavailable

Migration = tuple[str, tuple[str, ...]]
"""A migration: its name, recorded in the database once applied, and the statements it runs."""


def unapplied(
    migrations: Sequence[Migration], applied: Collection[str], store: str
) -> list[Migration]:
    """The migrations a database still lacks, in order; refuses one a newer version wrote."""
    unknown = set(applied) - {name for name, _ in migrations}
    if unknown:
        raise StorageUnavailable(
            f"{store} was written by a newer lazy-memory (unknown migrations: "
            f"{', '.join(sorted(unknown))}); upgrade lazy-memory to open it"
        )
    return [migration for migration in migrations if migration[0] not in applied]
