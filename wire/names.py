"""Every custom JSON-RPC method and notification of the engine, by name, written once."""

from __future__ import annotations

RECALL = "lazy/memory/recall"
SAVE = "lazy/memory/save"
REMOVE = "lazy/memory/rm"
HISTORY = "lazy/memory/history"
DOCUMENT = "lazy/memory/document"
CONTEXT = "lazy/memory/context"
COMPACT = "lazy/memory/compact"
IMPORT = "lazy/memory/import"
DOCTOR = "lazy/doctor"
SEARCH = "lazy/search"

MEMORY_CHANGED = "lazy/memory/changed"
"""The notification a client gets when a record changes: `{name, revision, operation}`."""

STORAGE_PREFIX = "lazy/storage/"
"""What every storage method's name starts with."""
STORAGE_LIST_RECORDS = "lazy/storage/list_records"
STORAGE_LIST_INDEX = "lazy/storage/list_index"
STORAGE_CHANGE_MARKER = "lazy/storage/change_marker"
STORAGE_GET_RECORD = "lazy/storage/get_record"
STORAGE_SAVE_RECORD = "lazy/storage/save_record"
STORAGE_REMOVE_RECORD = "lazy/storage/remove_record"
STORAGE_HISTORY = "lazy/storage/history"
STORAGE_SPELLINGS = "lazy/storage/spellings"
STORAGE_LIVE_REVISIONS = "lazy/storage/live_revisions"
STORAGE_REMOVED_SINCE = "lazy/storage/removed_since"
STORAGE_SEARCH = "lazy/storage/search"
STORAGE_UNREADABLE_RECORDS = "lazy/storage/unreadable_records"
STORAGE_GET_COMPACT = "lazy/storage/get_compact"
STORAGE_PUT_COMPACT = "lazy/storage/put_compact"
STORAGE_CLEAR_COMPACT = "lazy/storage/clear_compact"

STORAGE_WRITES = frozenset(
    {STORAGE_SAVE_RECORD, STORAGE_REMOVE_RECORD, STORAGE_PUT_COMPACT, STORAGE_CLEAR_COMPACT}
)
"""The storage methods that write: only a trusted peer may call them, never an agent."""

RECORD_WRITES = frozenset({SAVE, REMOVE, IMPORT, STORAGE_SAVE_RECORD, STORAGE_REMOVE_RECORD})
"""The methods that write records (a compact is not one): each is a change clients hear of."""
