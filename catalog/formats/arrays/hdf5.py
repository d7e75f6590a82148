"""HDF5 files (``.h5``, ``.hdf5``): datasets whose first axis is the example.

PatchCamelyon ships each split as two HDF5 files (``..._x.h5``: dataset ``x`` of
``(N, 96, 96, 3)`` uint8 patches; ``..._y.h5``: dataset ``y`` of ``(N, 1, 1, 1)`` labels);
dSprites one file (``imgs`` ``(N, 64, 64)``, ``latents/classes`` and ``latents/values``
``(N, 6)``). Role ``file`` is the HDF5 file; option ``files`` names more of them
(``{labels: {download: train_y, member: ...}}``). Option ``arrays`` maps every feature to
``[file:]dataset[column]``: a dataset path in the file (``latents/classes``), in the role's
file unless a name of ``files`` and a colon come first (``labels:y``); ``[k]`` takes column
``k`` of a 2-D dataset (``latents/classes[4]``). Each example's value is the dataset's row,
shaped to the feature: an Image gets its array reshaped to the feature's shape (dSprites'
``(64, 64)`` becomes ``(64, 64, 1)``), a ClassLabel, Scalar or Tensor of shape ``()`` the
row's one value (PatchCamelyon's ``(1, 1, 1)``); floats are cast to the feature's float dtype
(dSprites' float64 latent values are float32 features, as in the reference catalog). A Text
feature ``id`` is given by option ``id`` (``valid_{index}``). Every dataset must hold the same
number of rows.

Datasets are read a block of rows at a time through h5py (only the chunks a block needs), so
memory stays bounded, and any range of examples is read without those before it (random
access: shards are written independently). Before anything is read, each dataset's row shape
is checked against its feature, and its rows and its storage chunks against a byte budget
(`ROW_BYTES`, `CHUNK_BYTES`: a small file whose filters inflate to gigabytes is refused, not
read); a block holds at most `BLOCK_BYTES`, and a chunk stays in h5py's cache across blocks
(it is inflated once, not once per block). A value that is not a whole number where an
integer belongs (a ClassLabel, an integer feature) is an error, never truncated. Reading
needs h5py, an optional extra (``pip install 'catalog[hdf5]'``), imported only when a split
in this format is prepared.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Scalar, Tensor, Text
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat, whole_numbers

__all__ = ["FORMAT", "check", "examples"]

INSTALL = "pip install 'catalog[hdf5]'"
_BLOCK = 256  # rows read at a time, at most
#: The most bytes one row of a dataset may hold.
ROW_BYTES = 64 << 20
#: The most bytes (inflated) one storage chunk of a dataset may hold.
CHUNK_BYTES = 64 << 20
#: The most bytes a block of rows of one dataset may hold (fewer rows when rows are large).
BLOCK_BYTES = 64 << 20
#: What h5py raises for a damaged file (HDF5's own errors come through as these).
_H5_ERRORS = (OSError, KeyError, RuntimeError, ValueError, TypeError)
_ARRAY = re.compile(r"(?:(?P<file>[\w-]+):)?(?P<path>[^\[\]:]+)(?:\[(?P<column>\d+)\])?")


def check() -> None:
    """Raise MissingDependencyError unless h5py can be imported."""
    try:
        import h5py  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            f"reading HDF5 files (source format 'hdf5') needs h5py, an optional extra: {INSTALL}"
        ) from None


class _Datasets:
    """The split's examples by position, each feature's dataset read a block at a time."""

    def __init__(self, source: Source) -> None:
        check()
        import h5py

        self._source = source
        paths: dict[str | None, Path] = {None: source.file("file"), **source.options["files"]}
        self._files: dict[str | None, Any] = {}
        self._arrays: dict[str, tuple[Any, int | None, Path]] = {}
        for feature, text in source.options["arrays"].items():
            found = _ARRAY.fullmatch(text)
            assert found is not None  # checked by _validate
            key, name = found["file"], found["path"]
            path = paths[key]
            try:
                if key not in self._files:  # a chunk cache that holds one chunk of the budget
                    self._files[key] = h5py.File(path, "r", rdcc_nbytes=CHUNK_BYTES + (1 << 20))
            except OSError as error:
                self.close()
                raise SourceFormatError(
                    f"{path}: not an HDF5 file h5py can read ({error})"
                ) from None
            try:
                dataset = self._files[key][name]
            except (KeyError, ValueError, RuntimeError, OSError):
                held = self._names(key)
                self.close()
                raise SourceFormatError(
                    f"{path}: no HDF5 dataset {name!r}; it holds {held}"
                ) from None
            if not isinstance(dataset, h5py.Dataset) or not dataset.shape:
                self.close()
                raise SourceFormatError(f"{path}: {name!r} is not a dataset of rows")
            column = None if found["column"] is None else int(found["column"])
            if column is not None and (dataset.ndim != 2 or column >= dataset.shape[1]):
                self.close()
                raise SourceFormatError(
                    f"{path}: {name!r} has shape {dataset.shape}, no column {column}"
                )
            _check_storage(path, dataset, column, source.features[feature])
            self._arrays[feature] = (dataset, column, path)
        lengths = {f"{p.name}:{d.name}": d.shape[0] for d, _, p in self._arrays.values()}
        if len(set(lengths.values())) != 1:
            self.close()
            counts = ", ".join(f"{name} {n}" for name, n in lengths.items())
            raise SourceFormatError(f"the HDF5 datasets differ in length: {counts}")
        self._length = next(iter(lengths.values()))
        largest = max(_row_bytes(d) for d, _, _ in self._arrays.values())
        self._block = max(1, min(_BLOCK, BLOCK_BYTES // max(largest, 1)))

    def _names(self, key: str | None) -> list[str]:
        names: list[str] = []
        file = self._files.get(key)
        if file is not None:
            with contextlib.suppress(*_H5_ERRORS):  # a damaged file: what could be listed
                file.visit(names.append)
        return names[:20]

    @property
    def length(self) -> int:
        return int(self._length)

    def examples(self, start: int, stop: int) -> Examples:
        features = self._source.features
        id_format = self._source.options["id"]
        for first in range(start, min(stop, self._length), self._block):
            last = min(first + self._block, stop, self._length)
            blocks = {}
            for feature, (dataset, column, path) in self._arrays.items():
                try:
                    block = dataset[first:last]
                except _H5_ERRORS as error:  # a damaged chunk, filter or header
                    raise SourceFormatError(
                        f"{path}: {dataset.name!r}: rows {first}..{last - 1} cannot be read "
                        f"(a damaged HDF5 file? {error})"
                    ) from None
                blocks[feature] = block if column is None else block[:, column]
            for i in range(last - first):
                example = {}
                for f, block in blocks.items():
                    try:
                        example[f] = _value(features[f], block[i])
                    except SourceFormatError as error:
                        path = self._arrays[f][2]
                        raise SourceFormatError(
                            f"{path}: {self._arrays[f][0].name!r} row {first + i} "
                            f"(feature {f!r}): {error}"
                        ) from None
                if id_format is not None:
                    example["id"] = id_format.format(index=first + i)
                yield str(first + i), example

    def close(self) -> None:
        for file in self._files.values():
            file.close()
        self._files = {}


def _row_bytes(dataset: Any) -> int:
    return int(np.prod(dataset.shape[1:], dtype=np.int64)) * int(dataset.dtype.itemsize)


def _check_storage(path: Path, dataset: Any, column: int | None, feature: Any) -> None:
    """Refuse, before reading anything, a dataset whose rows cannot be the feature's values
    (a wrong shape) or whose rows or storage chunks are over the byte budget."""
    where = f"{path}: {dataset.name!r}"
    row = () if column is not None else tuple(dataset.shape[1:])
    values = int(np.prod(row, dtype=np.int64))
    one_value = isinstance(feature, (ClassLabel, Scalar)) or (
        isinstance(feature, Tensor) and feature.shape == ()
    )
    shape: tuple[int | None, ...] = tuple(getattr(feature, "shape", None) or ())
    if one_value and values != 1:
        raise SourceFormatError(
            f"{where} has rows of shape {row}; its feature takes one value per example"
        )
    known = isinstance(feature, (Image, Tensor)) and None not in shape
    if known and (
        values != int(np.prod([d or 0 for d in shape], dtype=np.int64))
        or (isinstance(feature, Tensor) and not one_value and row != shape)
    ):
        raise SourceFormatError(f"{where} has rows of shape {row}; its feature has shape {shape}")
    if dataset.dtype.kind not in "iufb":
        raise SourceFormatError(f"{where} holds {dataset.dtype}, not numbers")
    size = _row_bytes(dataset)
    if size > ROW_BYTES:
        raise SourceFormatError(
            f"{where} has rows of {size} bytes; catalog reads rows of at most {ROW_BYTES}"
        )
    if dataset.chunks is not None:
        chunk = int(np.prod(dataset.chunks, dtype=np.int64)) * dataset.dtype.itemsize
        if chunk > CHUNK_BYTES:
            raise SourceFormatError(
                f"{where} is stored in chunks of {chunk} bytes (inflated); catalog reads chunks "
                f"of at most {CHUNK_BYTES}: write it again with smaller chunks (h5repack -l)"
            )


def _value(feature: Any, row: np.ndarray[Any, Any]) -> Any:
    if isinstance(feature, Image):
        return row.reshape(feature.shape) if None not in feature.shape else row
    if isinstance(feature, (ClassLabel, Scalar)) or (
        isinstance(feature, Tensor) and feature.shape == ()
    ):
        if row.size != 1:
            raise SourceFormatError(f"expected one value per example, got shape {row.shape}")
        value = row.reshape(())
        if isinstance(feature, ClassLabel):
            return int(whole_numbers(value, "a class index"))
        return _cast(feature, value)
    return _cast(feature, row)


def _cast(feature: Any, value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Floats to the feature's float dtype, as the reference catalog casts them (dSprites'
    float64 latent values are float32 features); anything else as it is."""
    dtype = getattr(feature, "dtype", None)
    if dtype is not None and dtype.kind == "f" and value.dtype.kind == "f":
        return value.astype(dtype)
    if dtype is not None and dtype.kind in "iu" and value.dtype.kind == "f":
        return whole_numbers(value, f"an {dtype} value").reshape(value.shape)
    return value


def examples(source: Source) -> Examples:
    """Yield ``(index, {feature: its dataset's row, ...})`` for every row."""
    datasets = _Datasets(source)
    try:
        yield from datasets.examples(0, datasets.length)
    finally:
        datasets.close()


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    given = set(options["arrays"]) | ({"id"} if options["id"] is not None else set())
    return frozenset(given), frozenset()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not options["arrays"]:
        return "arrays must map at least one feature to a dataset"
    for feature, text in options["arrays"].items():
        found = _ARRAY.fullmatch(text)
        if found is None:
            return f"arrays.{feature}: expected [file:]dataset[column], got {text!r}"
        if found["file"] is not None and found["file"] not in options["files"]:
            return f"arrays.{feature}: {found['file']!r} is not a name of options.files"
    if options["id"] is not None and not isinstance(features["id"], Text):
        return "feature 'id' must be Text"
    return None


FORMAT = SourceFormat(
    name="hdf5",
    description="HDF5 files: one dataset (or column) per feature, examples along axis 0",
    roles=(Role("file"),),
    options={
        "arrays": Option("str_map", {}, "feature -> [file:]dataset[column]"),
        "files": Option("file_map", {}, "more HDF5 files, by the name arrays give them"),
        "id": Option("str", None, "the Text feature id, formatted with {index}"),
    },
    features=_features,
    examples=examples,
    validate=_validate,
    check=check,
    random_access=_Datasets,
)
