"""The array_record backend: opening catalog's ArrayRecord shards for random access, safely.

Shards are written uncompressed (``group_size:1,uncompressed``). That is not only faster to
read (no zstd on every record) but is what makes reading safe in processes forked after a
read, such as PyTorch's DataLoader workers on Linux:

    array_record decompresses zstd chunks through riegeli's ``RecyclingPool<ZSTD_DCtx>``.
    Returning a decompressor to that pool schedules riegeli's global ``BackgroundCleaner``,
    whose thread then waits on an ``absl::Mutex`` with a deadline. A fork copies the mutex
    with that waiter registered, but not the thread; the child's next return of a
    decompressor unlocks the mutex, absl evaluates the dead waiter's condition, which lived
    on the dead thread's stack, and glibc hands that stack to the child's next new thread:
    SIGSEGV (or a hang). Uncompressed chunks never touch the pool, in parent or child.

Shards written by older versions of catalog (zstd, the array_record default) and by other
tools can still be read; a process forked after reading them refuses to open them again
with one clear error, instead of crashing.
"""

from __future__ import annotations

import os
from pathlib import Path

from array_record.python.array_record_module import ArrayRecordReader

from catalog.errors import CatalogError
from catalog.storage.shards import shard_error

__all__ = ["READER_OPTIONS", "open_reader"]

#: One record per seek+read, no read-ahead, no thread pool: the fastest random access. (With
#: array_record's default thread pool a single seek+read costs ~150x more.)
READER_OPTIONS = "readahead_buffer_size:0,max_parallelism:0"


class _Process:
    """Whether this process (or the parent it was forked from) used a compressed reader."""

    used_compressed = False
    inherited_compressed = False

    @classmethod
    def forked(cls) -> None:
        cls.inherited_compressed = cls.inherited_compressed or cls.used_compressed


os.register_at_fork(after_in_child=_Process.forked)


def open_reader(path: str, *, compressed: bool) -> ArrayRecordReader:
    """A reader of shard `path` for random access, refusing what would crash.

    Raises ShardError when the file is missing or not a readable ArrayRecord file, and
    CatalogError when `compressed` shards would be opened in a process forked after its
    parent read compressed shards (see the module docstring).
    """
    if compressed and _Process.inherited_compressed:
        raise CatalogError(
            f"cannot read {path} in a forked process: its shards are zstd-compressed (prepared "
            "by an older catalog or another tool), and array_record crashes when a process "
            "forked after reading such shards reads them again. Prepare the dataset again "
            "with 'catalog prepare NAME --overwrite' (catalog's shards are uncompressed and "
            "fork-safe), or start workers with spawn, e.g. "
            "DataLoader(..., multiprocessing_context='spawn')"
        )
    if not Path(path).is_file():
        raise shard_error(path, "the file is missing")
    try:
        reader = ArrayRecordReader(path, READER_OPTIONS)
    except (RuntimeError, ValueError, OSError) as exc:
        raise shard_error(path, f"not a readable ArrayRecord file ({_first_line(exc)})") from None
    if not reader.ok():
        raise shard_error(path, "not a readable ArrayRecord file")
    if compressed:
        _Process.used_compressed = True
    return reader


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
