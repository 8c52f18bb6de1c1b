"""What clients are told an error is: its listed class's code and exit status, and a name.

An engine refinement of a listed error goes by that error's name (UnreadableRecords is a
StorageUnavailable to every client); a layer's own refinement keeps its more telling name
(the daemon's DaemonFull, which tests/e2e/daemon/test_front_door.py sees on the wire).
"""

from __future__ import annotations

from lazy_memory.engine.errors import (
    StorageUnavailable,
    UnreadableRecords,
    reported_name,
    reported_type,
)
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.rpc.jsonrpc.front_door import DaemonFull


def test_an_engine_refinement_goes_by_its_listed_class() -> None:
    error = UnreadableRecords("x", [UnreadableRecord("x", "bad type")])

    assert reported_type(error) is StorageUnavailable
    assert reported_name(error) == "StorageUnavailable"


def test_a_layer_s_own_refinement_keeps_its_name_and_its_class_s_code() -> None:
    error = DaemonFull("every member's place is taken")

    assert reported_type(error) is StorageUnavailable
    assert reported_name(error) == "DaemonFull"


def test_a_listed_error_is_itself() -> None:
    error = StorageUnavailable("down")

    assert (reported_type(error), reported_name(error)) == (
        StorageUnavailable,
        "StorageUnavailable",
    )
