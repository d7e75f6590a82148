"""DataSource: random access to one prepared split, as NumPy examples.

Contract (what PyTorch's DataLoader, Grain and plain loops rely on):

- a ``collections.abc.Sequence``: ``len(ds)``, ``ds[i]`` (negative indices count from the end;
  IndexError past it), ``ds[[i, j]]`` / ``ds[np.array([...])]`` (a list of examples),
  ``ds[a:b:c]`` (a view: a DataSource over those indices, nothing copied), iteration;
- ``__getitems__(indices)`` (PyTorch's batched fetch) and ``_getitems`` (Grain) return a list;
- picklable: readers are dropped when pickled and reopened lazily in each process, also after
  a fork (a reader opened in the parent must never be used in a child);
- safe to call from several threads at once (record reads take a lock; decoding does not);
- examples are dicts of writable NumPy arrays and Python ints, ready for default collate;
- never loads the split into memory: every access reads only the records it needs.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
from array_record.python.array_record_module import ArrayRecordReader

from catalog.codec import RecordCodec
from catalog.features import FeaturesDict
from catalog.info import DatasetInfo

__all__ = ["DataSource"]

#: One record per seek+read, no read-ahead, no thread pool: the fastest random access.
READER_OPTIONS = "readahead_buffer_size:0,max_parallelism:0"
_CHUNK = 1024  # records per range read while iterating

Example = dict[str, Any]


class DataSource(Sequence[Example]):
    """Random access to the examples of one prepared split (see the module docstring)."""

    def __init__(
        self, folder: str | Path, info: DatasetInfo, split: str, indices: range | None = None
    ) -> None:
        self.info = info
        self.split = split
        self._folder = Path(folder)
        shards = info.splits[split].shards
        self._paths = [str(self._folder / s.file) for s in shards]
        self._starts = [0]
        for shard in shards:
            self._starts.append(self._starts[-1] + shard.num_examples)
        self._indices = range(self._starts[-1]) if indices is None else indices
        self._decode = RecordCodec(info.features).decode
        self._lock = threading.Lock()
        self._readers: list[ArrayRecordReader] = []
        self._pid = -1

    @property
    def features(self) -> FeaturesDict:
        return self.info.features

    # -- readers, opened lazily once per process ------------------------------------------
    def _open(self) -> list[ArrayRecordReader]:
        with self._lock:
            if self._pid != os.getpid():
                # After a fork the parent's readers must not be touched (not even closed):
                # keep them referenced in _inherited so their destructors never run here.
                _inherited.extend(self._readers)
                self._readers = [ArrayRecordReader(p, READER_OPTIONS) for p in self._paths]
                self._pid = os.getpid()
            return self._readers

    def _read(self, positions: Iterable[int]) -> list[bytes]:
        """Records at absolute positions in the split (already range-checked)."""
        readers = self._readers if self._pid == os.getpid() else self._open()
        out = []
        with self._lock:
            if len(readers) == 1:
                reader = readers[0]
                for pos in positions:
                    reader.seek(pos)
                    out.append(reader.read())
            else:
                for pos in positions:
                    shard = bisect.bisect_right(self._starts, pos) - 1
                    readers[shard].seek(pos - self._starts[shard])
                    out.append(readers[shard].read())
        return out

    def close(self) -> None:
        """Close the readers of this process (they reopen on the next access)."""
        with self._lock:
            if self._pid == os.getpid():
                for reader in self._readers:
                    reader.close()
            self._readers, self._pid = [], -1

    def __enter__(self) -> DataSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"], state["_readers"], state["_decode"]
        state["_pid"] = -1
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._readers = []
        self._decode = RecordCodec(self.info.features).decode

    # -- Sequence -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._indices)

    def _position(self, index: int) -> int:
        try:
            return self._indices[index]
        except IndexError:
            raise IndexError(
                f"index {index} is out of range for split {self.split!r} of {self.info.name} "
                f"with {len(self._indices)} examples"
            ) from None
        except TypeError:
            raise TypeError(
                f"DataSource indices must be ints, slices or sequences of ints, got "
                f"{type(index).__name__}"
            ) from None

    @overload
    def __getitem__(self, key: int) -> Example: ...
    @overload
    def __getitem__(self, key: slice) -> DataSource: ...
    @overload
    def __getitem__(self, key: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]: ...
    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return DataSource(self._folder, self.info, self.split, self._indices[key])
        if isinstance(key, (list, tuple, np.ndarray)):
            return self.__getitems__(key)
        return self._decode(self._read((self._position(key),))[0])

    def __getitems__(self, indices: Sequence[int] | np.ndarray[Any, Any]) -> list[Example]:
        positions = [self._position(i) for i in np.asarray(indices, dtype=np.int64).tolist()]
        return [self._decode(record) for record in self._read(positions)]

    _getitems = __getitems__  # Grain's name for the batched fetch

    def __iter__(self) -> Iterator[Example]:
        indices = self._indices
        for start in range(0, len(indices), _CHUNK):
            for record in self._read(indices[start : start + _CHUNK]):
                yield self._decode(record)

    def __repr__(self) -> str:
        view = "" if len(self._indices) == self._starts[-1] else f", view={self._indices}"
        return (
            f"DataSource(name={self.info.name!r}, version={self.info.version!r}, "
            f"split={self.split!r}, num_examples={len(self)}{view}, features={self.features!r})"
        )


_inherited: list[ArrayRecordReader] = []
