"""The storage table: every `lazy/storage/*` method, made from the storage contract.

Each method is a row of wire/storage_contract.py: what it takes and returns, and the Storage
call it makes. Only a trusted peer (a connection whose grant has storage access) may use
these: they write as whatever actor the peer names, like a holder of the database file would.
A read of many records that meets records the store cannot read answers what it read of the
rest with them in `unreadable`, for the peer to raise UnreadableRecords as its own store
would (adapters/remote/storage.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from lazy_memory.engine.names import check_spelling, check_writable_name
from lazy_memory.engine.ports import Storage
from lazy_memory.rpc.jsonrpc.methods import Method
from lazy_memory.wire.storage import SaveRecordParams
from lazy_memory.wire.storage_contract import STORAGE_CONTRACT, Answer, ForwardingStorage


async def _save_record(storage: Storage, params: SaveRecordParams) -> BaseModel | dict[str, Any]:
    # A peer writes past the service, so the name rule is applied here too: a name the
    # store does not hold yet must obey it, and must not be another spelling of a held one
    # (engine/names.py).
    await check_writable_name(params.content.name, storage)
    await check_spelling(params.content.name, storage)
    return await ForwardingStorage.save_record.answer(storage, params)


_CHECKED: dict[str, Answer] = {ForwardingStorage.save_record.wire_name: _save_record}
"""The answers the daemon checks before the contract's own."""

STORAGE_METHODS: dict[str, Method[Storage, Any, Any]] = {
    row.wire_name: Method(
        row.wire_name, row.params, row.result, _CHECKED.get(row.wire_name, row.answer)
    )
    for row in STORAGE_CONTRACT
}
"""Every storage method a trusted peer may call, by name."""
