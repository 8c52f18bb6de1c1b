"""What clients are told an error is: its listed class's code and exit status, and a name.

An engine refinement of a listed error goes by that error's name (UnreadableRecords is a
StorageUnavailable to every client); a layer's own refinement keeps its more telling name
(the daemon's DaemonFull, which tests/e2e/daemon/test_front_door.py sees on the wire). The
codes and exit statuses the documents list are the ones the error classes carry.
"""

from __future__ import annotations

import re

from lazy_memory.engine.errors import (
    LISTED,
    StorageUnavailable,
    UnreadableRecords,
    reported_name,
    reported_type,
)
from lazy_memory.engine.index import UnreadableRecord
from lazy_memory.rpc.jsonrpc.front_door import DaemonFull
from tests.support import documents

ARCHITECTURE = documents.REPOSITORY / "docs" / "architecture.md"


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


def test_the_documents_list_each_error_s_code_and_exit_status() -> None:
    architecture = ARCHITECTURE.read_text(encoding="utf-8")
    readme = documents.README.read_text(encoding="utf-8")
    # The README's exit statuses: `| 4 | meaning | `InvalidRecord`, `InvalidConfig` |`.
    exits = re.findall(r"^\| (\d+) \| [^|]+ \| (`\w+`(?:, `\w+`)*) \|$", readme, re.MULTILINE)
    exit_of = {
        name.strip("`"): int(status) for status, names in exits for name in names.split(", ")
    }

    assert re.findall(r"^\| `(\w+)` \| (-\d+) \| (\d+) \|", architecture, re.MULTILINE) == [
        (error.__name__, str(error.code), str(error.exit_status)) for error in LISTED
    ]
    assert re.findall(r"^\| (-320\d\d) \| `(\w+)` \|", readme, re.MULTILINE) == [
        (str(error.code), error.__name__) for error in LISTED
    ]
    assert [exit_of.get(error.__name__) for error in LISTED] == [
        error.exit_status for error in LISTED
    ]
