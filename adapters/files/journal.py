"""The files backend's history log and the index over it, shared by every process.

`memory-history.json` holds the history as JSON Lines: one history entry per line, in the
order written, never rewritten. A write takes an exclusive `flock`, reads what other
processes appended since it last looked, appends its own line with one write and syncs it:
that sync is the commit, so a save costs the same at any size of store. A writer killed
mid-line leaves a last line without its newline: readers ignore it and the next writer cuts
it off, so only whole, synced lines are history.

The index over it is files/index.py's; `memories.json`, a checkpoint of that index, is
files/checkpoint.py's. Reading writes nothing and takes no lock: not the directory, not the
lock file, not a checkpoint (so a store on a read-only mount reads, and a missing one reads
as empty); the first write creates what is missing.

A store of the first format is read as it lies and converted by its first write (see
files/legacy.py).

Reading a store in the form this backend writes imports none of the record models (pydantic):
the index's lines and the checkpoint are read with the json module (files/entries.py,
files/checkpoint.py), and the models judge only what is in another form, read records whole,
and write. The launch hook reads the index through this journal so.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from lazy_memory.adapters.files.checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from lazy_memory.adapters.files.entries import Written
from lazy_memory.adapters.files.index import Index, Slot, changes_between
from lazy_memory.adapters.files.layout import (
    LOCK,
    FileKey,
    corrupt,
    file_key,
    file_of,
    key_of,
    mode_of,
    remove_stale_temps,
    validation_reason,
)
from lazy_memory.adapters.files.legacy import is_legacy_history, legacy_lines
from lazy_memory.adapters.files.lines import (
    READ_CHUNK,
    BadLine,
    indexed,
    lines_at,
    split_lines,
    vouched_for,
    whole_entry,
)
from lazy_memory.adapters.row_checks import as_text
from lazy_memory.engine.constants import CHECKPOINT_FILE, HISTORY_FILE
from lazy_memory.engine.errors import InvalidRecord, StorageUnavailable
from lazy_memory.engine.kinds import Operation

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Change
    from lazy_memory.engine.records import HistoryEntry

_T = TypeVar("_T")


class Journal:
    """The history log and its index under one directory; every method is thread-safe.

    Methods raise StorageUnavailable for a corrupt store and let OSError through: the
    backend translates those at its one boundary.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.history_path = root / HISTORY_FILE
        self.checkpoint_path = root / CHECKPOINT_FILE
        self.lock_path = root / LOCK
        # Guards the index and the read descriptor between the threads of one process; a
        # writer takes the flock first, then this, never the other way round.
        self._guard = threading.Lock()
        self._index = Index()
        self._reader: int | None = None
        # A first-format history as this format's lines, read from here instead of the file
        # (with that file's key, to notice it change); None for a store of this format.
        self._legacy: tuple[bytes, FileKey] | None = None
        # The writes seen since take_changes() last ran, while someone listens (else None).
        self._changes: list[Change] | None = None

    def open(self) -> None:
        """Read the index, so a corrupt store fails here; nothing is written or created."""
        with self._guard:
            self._refreshed()

    def close(self) -> None:
        """Close the read descriptor and forget the index."""
        with self._guard:
            self._close_reader()
            self._index = Index()

    def record_changes(self, recording: bool) -> None:
        """Start (from now on) or stop noting each write seen, for take_changes()."""
        with self._guard:
            self._changes = [] if recording else None
            if recording:
                self._refreshed()  # what the files hold now is where changes count from
                self._changes = []

    def take_changes(self) -> list[Change]:
        """The writes seen since the last call, this process's and others', in order."""
        with self._guard:
            if not self._changes:
                return []
            changes, self._changes = self._changes, []
            return changes

    def read(self, operation: Callable[[Index], _T]) -> _T:
        """operation's answer on the index brought up to date, with nothing changing meanwhile."""
        with self._guard:
            return operation(self._refreshed())

    def commit(self, change: Callable[[Index], HistoryEntry]) -> HistoryEntry:
        """Append the entry change makes from the up-to-date index; it is durable on return."""
        from pydantic_core import PydanticSerializationError

        from lazy_memory.adapters.data_dir import create_data_dir
        from lazy_memory.adapters.durable import append_synced, exclusive_lock

        # The first write makes the directory; the flock creates the lock file.
        create_data_dir(self.root)
        with exclusive_lock(self.lock_path), self._guard:
            index = self._refreshed()
            if self._legacy is not None:
                index = self._convert_legacy(self._legacy[0])
            entry = change(index)
            try:
                line = entry.model_dump_json().encode("utf-8") + b"\n"
            except PydanticSerializationError as error:  # a lone surrogate, say
                raise InvalidRecord("the record is not valid UTF-8 text") from error
            created = not self.history_path.exists()
            # Under the flock no one else appends, so anything past the index's end is the
            # torn line of a writer killed mid-write: the append writes over it.
            append_synced(self.history_path, line, index.offset)
            if created:
                self._refreshed()  # the index now follows the new file, at its first line
            else:
                self._apply(index, entry, index.offset, len(line))
            due = self._index.due_for_checkpoint()
            if due:
                self._checkpoint_quietly(self._index)
        return entry

    def checkpoint(self) -> None:
        """Write the checkpoint now if one is due, as a write would (for stores built in bulk)."""
        from lazy_memory.adapters.durable import exclusive_lock

        with exclusive_lock(self.lock_path), self._guard:
            index = self._refreshed()
            if self._legacy is not None:
                index = self._convert_legacy(self._legacy[0])
            if index.due_for_checkpoint():
                self._checkpoint(index)

    def entry_at(self, slot: Slot) -> HistoryEntry | BadLine:
        """The history entry a slot points at (or the BadLine it is); call it inside read()
        or commit()."""
        return self.entries_at([slot])[0]

    def entries_at(self, slots: Sequence[Slot]) -> list[HistoryEntry | BadLine]:
        """The history entries the slots point at, in the same order, read in few calls; a
        line that does not read but names its record is its BadLine."""
        if not slots:
            return []
        self._require_reader()
        lines = lines_at(slots, self._pread)
        entries: list[HistoryEntry | BadLine] = []
        for number, line in enumerate(lines):
            slot = slots[number]
            entry = whole_entry(line, slot.offset, self.history_path)
            if isinstance(entry, BadLine):
                entries.append(entry)
                continue
            if (entry.revision, entry.description) != (slot.revision, slot.description):
                raise self._corrupt(
                    f"{CHECKPOINT_FILE} points at byte {slot.offset} of {HISTORY_FILE}, which "
                    "holds another entry"
                )
            entries.append(entry)
        return entries

    def history(self, name: str | None = None) -> list[HistoryEntry | BadLine]:
        """Every entry in the order written, or those of one name; call it inside read().

        A line that does not read but names its record is its BadLine (only the named one's,
        for one name); a line that names none makes the store corrupt.
        """
        index = self._index
        if index.offset == 0:
            return []
        self._require_reader()
        entries: list[HistoryEntry | BadLine] = []
        position = 0
        while position < index.offset:
            chunk = self._pread(min(READ_CHUNK, index.offset - position), position)
            whole = chunk[: chunk.rfind(b"\n") + 1]
            if not whole:  # a single line longer than the chunk
                whole = self._pread(index.offset - position, position)
                whole = whole[: whole.find(b"\n") + 1]
            for line in split_lines(whole):
                if line.strip():
                    entry = whole_entry(line, position, self.history_path)
                    if name is None or as_text(entry.name) == name:
                        entries.append(entry)
                position += len(line)
        return entries

    def _refreshed(self) -> Index:
        """The index brought up to date with the files (under the guard)."""
        checkpoint_key = key_of(self.checkpoint_path)
        history_file = file_of(self.history_path)
        index = self._index
        if (
            checkpoint_key != index.checkpoint_key
            or history_file != index.history_file
            or (self._legacy is not None and key_of(self.history_path) != self._legacy[1])
        ):
            index = self._reloaded()
        elif history_file is not None:
            self._catch_up(index)
        return index

    def _reloaded(self) -> Index:
        """A new index from the checkpoint (if any) and the history lines after it."""
        self._close_reader()
        previous, self._index = self._index, Index()
        recording, self._changes = self._changes, None
        try:
            index = self._rebuilt()
        finally:
            self._changes = recording
        if recording is not None:
            recording += changes_between(previous.slots, index.slots)
        self._index = index
        return index

    def _rebuilt(self) -> Index:
        index = Index()
        checkpoint, checkpoint_key = read_checkpoint(self.checkpoint_path)
        with contextlib.suppress(FileNotFoundError):
            self._reader = os.open(self.history_path, os.O_RDONLY | os.O_CLOEXEC)
        if self._reader is not None:
            status = os.fstat(self._reader)
            index.history_file = (status.st_dev, status.st_ino)
            self._read_legacy(self._reader, status)
        if checkpoint is not None and checkpoint.times_fit():
            self._check_checkpoint(checkpoint)
            index.checkpoint_entries = index.entries = checkpoint.history_entries
            index.offset = checkpoint.history_bytes
            index.slots = checkpoint.names
            index.times = dict(zip(checkpoint.names, checkpoint.times or (), strict=True))
            index.live = sorted(name for name, slot in index.slots.items() if not slot.removed)
        index.checkpoint_key = checkpoint_key
        if self._reader is not None:
            self._catch_up(index)
        return index

    def _catch_up(self, index: Index) -> None:
        """Apply the whole lines appended after the index's end."""
        size = self._size()
        if size < index.offset:
            raise self._corrupt(f"it is shorter than the {index.offset} bytes already read")
        while size > index.offset:
            chunk = self._pread(min(READ_CHUNK, size - index.offset), index.offset)
            whole = chunk[: chunk.rfind(b"\n") + 1]
            if not whole:
                if len(chunk) < READ_CHUNK:
                    return  # only a line still being written, or a torn one
                whole = self._pread(size - index.offset, index.offset)
                whole = whole[: whole.find(b"\n") + 1]
                if not whole:
                    return
            for line in split_lines(whole):
                if line.strip():
                    entry = vouched_for(indexed(line), index.offset, self.history_path)
                    self._apply(index, entry, index.offset, len(line))
                else:
                    index.skip(len(line))

    def _apply(
        self, index: Index, entry: Written | HistoryEntry | BadLine, offset: int, length: int
    ) -> None:
        if isinstance(entry, BadLine):
            index.apply_unreadable(entry, offset, length)
        else:
            index.apply(entry, offset, length)
        if self._changes is not None:
            from lazy_memory.engine.ports import Change

            if isinstance(entry, BadLine):
                name = as_text(entry.name)
                revision, operation = index.slots[name].revision, Operation.SAVE
            else:
                name, revision, operation = entry.name, entry.revision, entry.operation
            self._changes.append(Change(name=name, revision=revision, operation=operation))

    def _check_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Refuse a checkpoint that reaches past the history or into the middle of a line."""
        end = checkpoint.history_bytes
        if end == 0:
            return
        last = b"" if self._reader is None else self._pread(1, end - 1)
        if last != b"\n":
            holds = 0 if self._reader is None else self._size()
            raise self._corrupt(
                f"it reflects {checkpoint.history_entries} history entries ({end} bytes) but "
                f"{HISTORY_FILE} holds {holds} bytes that do not end one there",
                self.checkpoint_path,
            )

    def _checkpoint_quietly(self, index: Index) -> None:
        """Write the checkpoint; a failure (a full disk) only means a longer replay later."""
        # Here, not at the top: reading the store (the launch hook does) logs nothing.
        import logging

        try:
            self._checkpoint(index)
        except OSError as error:
            logging.getLogger(__name__).info("no checkpoint of %s: %s", self.checkpoint_path, error)

    def _checkpoint(self, index: Index) -> None:
        """Replace memories.json with the index (under the flock and the guard)."""
        remove_stale_temps(self.root)
        write_checkpoint(self.checkpoint_path, index)

    def _read_legacy(self, descriptor: int, status: os.stat_result) -> None:
        """Note whether the history just opened is the first format's, and if so its lines."""
        if not is_legacy_history(os.pread(descriptor, 64, 0)):
            self._legacy = None
            return
        from pydantic import ValidationError

        data = os.pread(descriptor, status.st_size, 0)
        try:
            self._legacy = (legacy_lines(data), file_key(status))
        except ValidationError as error:
            raise self._corrupt(validation_reason(error)) from error

    def _convert_legacy(self, lines: bytes) -> Index:
        """Rewrite a first-format store as lines of this format (under the flock and the guard)."""
        from lazy_memory.adapters.durable import replace_file

        remove_stale_temps(self.root)
        replace_file(self.history_path, lines, mode_of(self.history_path))
        # The old memories.json is ignored from now on; the checkpoint replaces it.
        index = self._reloaded()
        self._checkpoint(index)
        return index

    def _pread(self, size: int, offset: int) -> bytes:
        """size bytes of the history from offset (fewer at its end)."""
        if self._legacy is not None:
            return self._legacy[0][offset : offset + size]
        return os.pread(self._require_reader(), size, offset)

    def _size(self) -> int:
        """How many bytes the history holds."""
        if self._legacy is not None:
            return len(self._legacy[0])
        return os.fstat(self._require_reader()).st_size

    def _require_reader(self) -> int:
        if self._reader is None:
            raise self._corrupt(f"{HISTORY_FILE} is missing")
        return self._reader

    def _close_reader(self) -> None:
        self._legacy = None
        if self._reader is not None:
            os.close(self._reader)
            self._reader = None

    def _corrupt(self, reason: str, path: Path | None = None) -> StorageUnavailable:
        return corrupt(path or self.history_path, reason)
