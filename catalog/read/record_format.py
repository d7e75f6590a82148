"""Record formats: how the records of a prepared dataset are stored and decoded, by name.

A dataset's ``dataset_info.json`` names the format of its records (``record_format["name"]``).
A `RecordFormat` registered under that name is what `DataSource` reads them through:

- `RecordFormat.codec`: the codec for the dataset's features as its ``record_format`` stores
  them (``skip`` / ``decoders`` as ``decoders=`` gives them), something with ``decode`` and
  ``decode_many`` (`Codec`); a codec that can also decode fixed-size records as whole
  columns is a `ColumnCodec`;
- `RecordFormat.open`: a reader of one shard (`ShardReader`): ``num_records()``,
  ``seek(i)`` + ``read()`` for one record, ``read(start, stop)`` for a range, ``close()``;
- `RecordFormat.mappable`: whether batched reads may gather records from a memory map of the
  shards (`catalog.read.mapped_shard`: uncompressed ArrayRecord files of one record per chunk);
- `RecordFormat.decode_fix`: what to do about a record that does not decode.

catalog's own format is registered by `catalog.read.catalog_format`; others by the modules
that read them (TensorFlow Datasets' serialized Examples: next to `catalog.open_tfds`, which
opens such directories; nothing here imports it). A format is pickled by reference, as the
module-level instance its module defines: unpickling a DataSource in a fresh process imports
that module, which registers the format again.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

from catalog.errors import SourceFormatError

if TYPE_CHECKING:
    import numpy as np

    from catalog.info.dataset_info import DatasetInfo

__all__ = ["Codec", "ColumnCodec", "RecordFormat", "ShardReader", "format_of", "register"]


class Codec(Protocol):
    """Decodes records into examples."""

    def decode(self, record: bytes) -> Any: ...
    def decode_many(self, records: Sequence[bytes]) -> list[Any]: ...


@runtime_checkable
class ColumnCodec(Codec, Protocol):
    """A codec of records that, when every feature is fixed-size, all have `record_size` bytes
    and decode many at a time as columns (None when they cannot)."""

    record_size: int | None

    def decode_columns(self, records: Sequence[bytes]) -> Any | None: ...
    def decode_rows(self, rows: np.ndarray[Any, Any]) -> Any | None: ...


class ShardReader(Protocol):
    """Random access to the records of one shard (not thread-safe: `DataSource` locks)."""

    def num_records(self) -> int: ...
    def seek(self, index: int) -> None: ...
    @overload
    def read(self) -> bytes: ...
    @overload
    def read(self, start: int, stop: int) -> list[bytes]: ...
    def close(self) -> None: ...


class RecordFormat(ABC):
    """A format of records: how to decode them and how to open the shards holding them.

    Make one instance per format, at module level, and `register` it; `instance` is the name
    it has in its module, which is how it is pickled (see the module docstring).
    """

    def __init__(self, name: str, *, instance: str) -> None:
        self.name = name  #: ``record_format["name"]`` in the dataset_info.json of such data
        self._instance = instance

    def __reduce__(self) -> str:
        return self._instance  # a global of the module defining the class: pickled by reference

    def __repr__(self) -> str:
        return f"<record format {self.name!r}>"

    @abstractmethod
    def codec(
        self,
        info: DatasetInfo,
        *,
        skip: Iterable[str],
        decoders: Mapping[str, Callable[[bytes], Any]],
    ) -> Codec:
        """The codec of the records of `info`'s dataset (its features, and how its
        ``record_format`` says they are stored): `skip` features come back as their stored
        bytes, `decoders` features go to the function given instead."""

    @abstractmethod
    def open(self, path: str, info: DatasetInfo) -> ShardReader:
        """A reader of the shard at `path`, one of the dataset `info` describes. Raises
        ShardError when the file is missing or unreadable."""

    def mappable(self, info: DatasetInfo) -> bool:
        """Whether `info`'s shards may be memory-mapped for batched reads (when their records
        are all one size): only uncompressed ArrayRecord files of one record per chunk."""
        return False

    @abstractmethod
    def decode_fix(self, info: DatasetInfo) -> str:
        """What to do about a record of `info`'s dataset that was read but does not decode."""


_FORMATS: dict[str, RecordFormat] = {}
_F = TypeVar("_F", bound=RecordFormat)


def register(record_format: _F) -> _F:
    """Read data whose ``record_format["name"]`` is ``record_format.name`` through it."""
    _FORMATS[record_format.name] = record_format
    return record_format


def format_of(info: DatasetInfo, folder: object) -> RecordFormat:
    """The registered format of the records of `info`'s dataset (in `folder`)."""
    name = info.record_format.get("name")
    found = _FORMATS.get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(repr(n) for n in sorted(_FORMATS))
        raise SourceFormatError(
            f"{folder}: its records are in format {name!r} (record_format in its "
            f"dataset_info.json), which no registered record format reads (registered: "
            f"{known}). Open a directory TensorFlow Datasets prepared with "
            "catalog.open_tfds(path), which registers TFDS's format, and a dataset catalog "
            "prepared with catalog.data_source(...); a format of your own needs "
            "catalog.read.record_format.register(...) before it is read"
        )
    return found
