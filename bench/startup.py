"""Where a `lazy` process's start goes: `python -X importtime` of three processes.

On the smallest store of each backend: `lazy memory list`, `lazy memory context --hook`
right after a write (the path that renders a section, checked to have imported the engine's
renderer), and `lazy engine` up to its answer to `initialize`, each run RUNS times. CPython
writes one line per imported module to stderr, `self us | cumulative us | name`, the name
indented two spaces a level, each line once its import is done. Each module's own time goes
to a package: a module of lazy-memory to its subpackage (`lazy_memory.engine`, ...), any
other module to the outermost other package on its chain of importers, so `pydantic` counts
the `pydantic_core` it imports and `site` the .pth files the interpreter runs. The packages
add up to the total. The rows are the total and the TOP largest packages (the same ones for
every backend), medians of the runs; importtime's own bookkeeping inflates every figure a
little. No target: this is the report of where the launch path's time goes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bench import cli
from bench.client import connected, lazy_command
from bench.launch import HOOK, Writer, writing
from bench.plan import Plan
from bench.report import Measurement, median
from bench.stores import Store, copy_store

RUNS = 3
"""Profiled runs of each process; every row is their median."""

TOP = 6
"""Packages reported per process, the largest."""

_TOTAL = "total"
"""The row of all of a process's imports, beside its packages'."""

_RENDERER = "lazy_memory.engine.delivery"
"""What only a hook that renders imports (a hook showing its kept section does not)."""

_NOTE = (
    f"python -X importtime, median of {RUNS} runs: each module's own time goes to its package "
    "(lazy-memory's by subpackage; any other module to the outermost other package that "
    "imported it, so pydantic includes pydantic_core), and the packages add up to the total"
)

_PROCESSES = (
    "`lazy memory list`",
    "`lazy memory context --hook` after a write",
    "`lazy engine` to initialize",
)

Profile = dict[str, float]
"""Milliseconds of import by package, for one run (or the median of several)."""


@dataclass(frozen=True)
class Import:
    """One line of -X importtime, with the imports made while it ran."""

    name: str
    self_us: int
    level: int
    children: list[Import] = field(default_factory=list)


async def imports(plan: Plan, stores: Sequence[Store]) -> list[Measurement]:
    """The import time of each process on each store (the smallest of each backend): the total
    and the same packages for every store, the TOP largest on any of them."""
    profiles = {store: await _profiles(plan, store) for store in stores}
    rows = []
    for process in _PROCESSES:
        medians = {store: _medians(profiles[store][process]) for store in stores}
        rows += [
            _row(process, store, package, medians[store].get(package, 0.0))
            for package in [_TOTAL, *_largest(medians.values())]
            for store in stores
        ]
    return rows


def parse(stderr: str) -> list[Import]:
    """The imports -X importtime reported in stderr (other lines skipped), as trees: the roots,
    imports made by running code rather than by another import."""
    done: list[Import] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or line.endswith("imported package"):
            continue
        self_us, _, indented = line.removeprefix("import time:").split("|")
        level = (len(indented) - len(indented.lstrip()) - 1) // 2
        # Lines come as imports finish: the deeper ones just before are what this one imported.
        children: list[Import] = []
        while done and done[-1].level > level:
            children.insert(0, done.pop())
        done.append(Import(indented.strip(), int(self_us), level, children))
    return done


def by_package(roots: Sequence[Import]) -> Profile:
    """Milliseconds of each package's imports, every module's own time counted once."""
    profile: Profile = {}

    def charge(module: Import, owner: str | None) -> None:
        if owner is None:
            parts = module.name.split(".")
            own = parts[0] == "lazy_memory"
            package = ".".join(parts[:2]) if own else parts[0]
            owner = None if own else package
        else:
            package = owner
        profile[package] = profile.get(package, 0.0) + module.self_us / 1000
        for child in module.children:
            charge(child, owner)

    for root in roots:
        charge(root, None)
    return profile


def _importtime(arguments: list[str]) -> list[str]:
    """`lazy` with arguments, under -X importtime: the console script is a Python file, so this
    interpreter running it is the process a user starts."""
    command = lazy_command()
    if command[0] == sys.executable:
        command = command[1:]
    return [sys.executable, "-X", "importtime", *command, *arguments]


async def _profiles(plan: Plan, store: Store) -> dict[str, list[Profile]]:
    """RUNS profiles of each process on store, by process."""
    listing = [_profile(_run(["memory", "list"], store)) for _ in range(RUNS)]
    written = copy_store(store, plan.workdir, "imports")
    async with writing(plan, written, RUNS) as writer:
        hooks = [await _hook_after_write(writer, written) for _ in range(RUNS)]
    engines = [await _engine_to_initialize(plan, store, run) for run in range(RUNS)]
    return dict(zip(_PROCESSES, (listing, hooks, engines), strict=True))


def _run(arguments: list[str], store: Store) -> str:
    """The stderr of one profiled run of `lazy` with arguments in the store's root."""
    return cli.timed_run(_importtime(arguments), store.environment(), store)[1].stderr.decode()


def _profile(stderr: str) -> Profile:
    return by_package(parse(stderr))


async def _hook_after_write(writer: Writer, store: Store) -> Profile:
    await writer.save()
    stderr = _run(HOOK, store)
    if not any(line.endswith(f" {_RENDERER}") for line in stderr.splitlines()):
        raise RuntimeError(f"the hook after a write did not import {_RENDERER}: it did not render")
    return _profile(stderr)


async def _engine_to_initialize(plan: Plan, store: Store, run: int) -> Profile:
    log = plan.workdir / f"importtime-engine-{store.backend}-{store.records}-{run}.log"
    async with connected(_importtime(["engine"]), store.environment(), log):
        # Each line is written when its import finishes: the log now holds all of them that
        # happened before initialize was answered.
        return _profile(log.read_text(encoding="utf-8"))


def _medians(runs: Sequence[Profile]) -> Profile:
    """Each package's median over the runs (0 in a run that did not import it), and the
    total's."""
    packages = dict.fromkeys(package for profile in runs for package in profile)
    medians = {
        package: median([profile.get(package, 0.0) for profile in runs]) for package in packages
    }
    return {_TOTAL: median([sum(profile.values()) for profile in runs]), **medians}


def _largest(medians: Iterable[Profile]) -> list[str]:
    """The TOP packages of the largest median on any store, largest first."""
    largest: Profile = {}
    for profile in medians:
        for package, milliseconds in profile.items():
            if package != _TOTAL:
                largest[package] = max(milliseconds, largest.get(package, 0.0))
    return sorted(largest, key=largest.__getitem__, reverse=True)[:TOP]


def _row(process: str, store: Store, package: str, milliseconds: float) -> Measurement:
    return Measurement(
        f"import time of {process}: {package}",
        store.backend,
        store.records,
        milliseconds,
        "ms",
        samples=RUNS,
        note=_NOTE,
    )
