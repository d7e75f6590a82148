"""MATLAB ``.mat`` files (v5, as SVHN ships them): an image array and a label array.

Reading them needs scipy (and h5py for v7.3 files), an optional extra (``pip install
'catalog[mat]'``), imported only when a split in this format is prepared; without it the error
names the extra, before anything is downloaded. The arrays are read a block of examples at a
time (`catalog.formats.arrays.matfile`: v5 variables in place or, compressed, staged once to an
``.npy`` file; v7.3 through h5py), so memory stays bounded (SVHN's extra split, 1.6 GB of
pixels, prepares in well under 500 MB); what that cannot slice is read whole by scipy.

Options:

- ``images``: the image array, ``(height, width, channels, N)`` (default ``X``); examples
  lie along ``example_axis`` (default -1, the last axis, as in SVHN).
- ``labels``: the label array, ``(N,)`` or ``(N, 1)`` (default ``y``).
- ``label_modulo``: if given, label = value % label_modulo (SVHN stores the digit 0 as 10:
  ``label_modulo: 10``).

- ``id_digits``: the id's least number of digits (default 5: ``train_00000``; SVHN's is 6).

Examples hold ``image`` and ``label``, and ``id`` if the spec declares it (``train_00000``...).

Format ``mat_ids`` (Oxford Flowers 102) reads image files named by ids instead: role ``ids``
is a .mat file whose array ``ids_array`` lists the split's image ids (counting from 1), role
``labels`` a .mat file whose array ``labels_array`` holds every image's label (the id's
``- 1``-th entry, minus ``label_base``), role ``root`` the directory holding the images, each
named ``file`` formatted with ``{id}`` (``image_{id:05d}.jpg``). The image file is kept as it
is; ``file_name`` holds its name if the spec declares it.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.formats.arrays import matfile
from catalog.formats.base import (
    Examples,
    Option,
    Role,
    Source,
    SourceFormat,
    running_id,
    whole_numbers,
)

__all__ = ["FORMAT", "ID_FORMAT", "check", "examples", "id_examples", "load_arrays"]

INSTALL = "pip install 'catalog[mat]'"
_BLOCK = 1024  # examples read at a time, at most
#: The most bytes one example's image may hold, and one block of examples (fewer examples
#: when they are large), checked before anything is read.
EXAMPLE_BYTES = 64 << 20
BLOCK_BYTES = 64 << 20


def check() -> None:
    """Raise MissingDependencyError unless scipy can be imported."""
    try:
        import scipy.io  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            f"reading .mat files (source format 'mat') needs scipy, an optional extra: {INSTALL}"
        ) from None


def load_arrays(path: Path, names: list[str]) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays `names` of a .mat file; SourceFormatError if it is unreadable or lacks one."""
    check()
    import scipy.io

    try:
        version = scipy.io.matlab.matfile_version(path)[0]
        if version == 0:
            _check_v4(path)  # scipy allocates what a header claims before reading it
        elif version == 1:
            _check_v5(path)
        data = scipy.io.loadmat(path, variable_names=names)
        missing = [name for name in names if name not in data]
        held = [entry[0] for entry in scipy.io.whosmat(path)] if missing else []
    except Exception as error:  # a damaged file: scipy raises whatever its parser hit
        raise SourceFormatError(
            f"{path}: not a MATLAB v5 .mat file scipy can read ({type(error).__name__}: {error})"
        ) from None
    if missing:
        raise SourceFormatError(f"{path}: no array {missing[0]!r}; it holds {held}")
    return {name: data[name] for name in names}


_V4_ITEM = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}  # MATLAB v4's P digit: the data's item size


def _check_v4(path: Path) -> None:
    """SourceFormatError unless every variable of a MATLAB v4 file (a 20-byte header, its
    name, its data) lies within the file, so that nothing larger than it is allocated."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        position = 0
        while position < size:
            f.seek(position)
            raw = f.read(20)
            fields = None
            for endian in "<>":
                found = struct.unpack(f"{endian}5i", raw) if len(raw) == 20 else None
                if found is not None and 0 <= found[0] < 5000 and min(found[1:]) >= 0:
                    fields = found
                    break
            if fields is None or (fields[0] // 10) % 10 not in _V4_ITEM:
                raise SourceFormatError(f"{path}: a damaged MATLAB v4 header at byte {position}")
            kind, rows, cols, imaginary, name_length = fields
            data = rows * cols * _V4_ITEM[(kind // 10) % 10] * (2 if imaginary else 1)
            position += 20 + name_length + data
            if position > size:
                raise SourceFormatError(
                    f"{path}: a MATLAB v4 variable of {rows}x{cols} runs past the end of the file "
                    "(a damaged or truncated file)"
                )


def _check_v5(path: Path) -> None:
    """SourceFormatError unless every data element of a MATLAB v5 file (those inside its
    uncompressed matrices too) lies within the element holding it and the file."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        endian = "<" if f.read(128)[126:128] == b"IM" else ">"
        _check_elements(f, path, 128, size, endian, 0)


_MI_ITEM = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8}  # v5 data types
_NUMERIC = range(6, 16)  # mxDOUBLE_CLASS .. mxUINT64_CLASS


def _check_elements(f: Any, path: Path, start: int, end: int, endian: str, depth: int) -> None:
    """Check the data elements between `start` and `end` (see `_check_v5`), and of each
    numeric matrix that its parts are all there and its data as large as its dimensions say
    (scipy's reader crashes on a complex flag without an imaginary part)."""
    position = start
    while position + 8 <= end:
        f.seek(position)
        kind, nbytes = struct.unpack(f"{endian}II", f.read(8))
        if kind >> 16:  # a small element: its data in the tag
            position += 8
            continue
        stop = position + 8 + nbytes
        if stop > end:
            raise SourceFormatError(
                f"{path}: a data element of {nbytes} bytes at byte {position} runs past the end "
                "of what holds it (a damaged or truncated .mat file)"
            )
        if kind == 14 and depth < 16:  # miMATRIX: its parts (compressed ones are streamed)
            _check_elements(f, path, position + 8, stop, endian, depth + 1)
            _check_matrix(f, path, position + 8, stop, endian)
        if kind == 15:  # miCOMPRESSED: scipy allocates what the inner tag claims, first
            _check_compressed(f, path, position, nbytes, endian)
        position = stop + (0 if kind == 15 else -nbytes % 8)


#: zlib inflates at most about this many bytes from one (its deflate format's limit, 1032:1)
_ZLIB_RATIO = 1032


def _check_compressed(f: Any, path: Path, position: int, nbytes: int, endian: str) -> None:
    """SourceFormatError unless the element a compressed one holds is no larger than its
    `nbytes` of zlib data can inflate to, and the parts at its head (those in its first
    64 KiB) lie within it: scipy allocates what a damaged tag claims before reading it."""
    f.seek(position + 8)
    inflater = zlib.decompressobj()
    try:
        head = inflater.decompress(f.read(min(nbytes, 1 << 16)), 1 << 16)
    except zlib.error as error:
        raise SourceFormatError(
            f"{path}: the compressed data element at byte {position} is not zlib data ({error}; "
            "a damaged .mat file)"
        ) from None
    if len(head) < 8:
        return  # too short to hold a tag: scipy names what is wrong
    kind, inner = struct.unpack(f"{endian}II", head[:8])
    end = 8 + inner
    if inner > nbytes * _ZLIB_RATIO + 64:
        raise SourceFormatError(
            f"{path}: the compressed data element at byte {position} claims {inner} bytes, more "
            f"than its {nbytes} bytes of zlib data can hold (a damaged .mat file)"
        )
    at = 8
    while kind == 14 and at + 8 <= min(end, len(head)):  # a matrix's parts, as far as read
        part, size = struct.unpack(f"{endian}II", head[at : at + 8])
        if part >> 16:  # a small element: its data in the tag
            at += 8
            continue
        if at + 8 + size > end:
            raise SourceFormatError(
                f"{path}: a data element of {size} bytes in the compressed element at byte "
                f"{position} runs past the end of what holds it (a damaged .mat file)"
            )
        at += 8 + size + (-size % 8)


def _parts(f: Any, start: int, end: int, endian: str) -> list[tuple[int, int, int]]:
    """``(type, nbytes, data offset)`` of the data elements between `start` and `end`."""
    parts, position = [], start
    while position + 8 <= end:
        f.seek(position)
        kind, nbytes = struct.unpack(f"{endian}II", f.read(8))
        if kind >> 16:
            parts.append((kind & 0xFFFF, kind >> 16, position + 4))
            position += 8
            continue
        parts.append((kind, nbytes, position + 8))
        position += 8 + nbytes + (-nbytes % 8)
    return parts


def _check_matrix(f: Any, path: Path, start: int, end: int, endian: str) -> None:
    parts = _parts(f, start, end, endian)
    if len(parts) < 2 or parts[0][1] < 4 or parts[1][1] % 4:
        return  # not a matrix header scipy reads as numeric (an empty one, a struct's)
    f.seek(parts[0][2])
    flags = struct.unpack(f"{endian}I", f.read(4))[0]
    if flags & 0xFF not in _NUMERIC:
        return
    f.seek(parts[1][2])
    dims = struct.unpack(f"{endian}{parts[1][1] // 4}i", f.read(parts[1][1]))
    needed = 5 if flags & 0x800 else 4  # flags, dims, name, real part (, imaginary part)
    count = math.prod(dims) if all(d >= 0 for d in dims) else -1
    data = parts[3:needed]
    if (
        len(parts) < needed
        or count < 0
        or any(kind not in _MI_ITEM or nbytes != count * _MI_ITEM[kind] for kind, nbytes, _ in data)
    ):
        raise SourceFormatError(
            f"{path}: a numeric variable at byte {start - 8} whose data is not what its "
            f"dimensions {dims} say (a damaged .mat file)"
        )


class _Arrays:
    """The split's examples by position: the image and label arrays are read a slice at a
    time (`catalog.formats.arrays.matfile`), or whole through scipy for what that cannot slice."""

    def __init__(self, source: Source) -> None:
        self._source = source
        options = source.options
        path = self._path = source.file("mat")
        names = [options["images"], options["labels"]]
        try:
            arrays: dict[str, Any] = matfile.mat_arrays(path, names, source.scratch)
        except (
            matfile.Unsupported,
            KeyError,
            ValueError,
            OSError,
            EOFError,
            zlib.error,
            struct.error,
        ):
            arrays = load_arrays(path, names)  # scipy names what is wrong, or reads it whole
        images = arrays[options["images"]]
        self._axis = options["example_axis"]
        if not -images.ndim <= self._axis < images.ndim:
            raise SourceFormatError(
                f"{path}: array {options['images']!r} of shape {images.shape} has no axis "
                f"{self._axis} (options.example_axis)"
            )
        self._images = images
        self._length: int = images.shape[self._axis]
        others = math.prod(images.shape) // max(1, self._length)
        dtype = getattr(images, "as_dtype", None) or getattr(images, "dtype", None)
        size = others * (np.dtype(dtype).itemsize if dtype is not None else 8)  # v7.3: at most
        if size > EXAMPLE_BYTES:
            raise SourceFormatError(
                f"{path}: array {options['images']!r} of shape {images.shape} holds {size} "
                f"bytes per example; catalog reads examples of at most {EXAMPLE_BYTES}"
            )
        self._block = max(1, min(_BLOCK, BLOCK_BYTES // max(1, size)))
        labels = arrays[options["labels"]]
        if not isinstance(labels, np.ndarray):
            labels = labels.read(0, 0, labels.shape[0])
        self._labels = _labels(path, labels, self._length, options["label_modulo"])

    @property
    def length(self) -> int:
        return self._length

    def examples(self, start: int, stop: int) -> Examples:
        with_id = "id" in self._source.features
        for first in range(start, min(stop, self._length), self._block):
            last = min(first + self._block, stop, self._length)
            if isinstance(self._images, np.ndarray):
                block = np.moveaxis(self._images, self._axis, 0)[first:last]
            else:
                block = self._images.read(self._axis, first, last)
            for i, image in enumerate(block, first):
                key = running_id(self._source.split, i, self._source.options["id_digits"])
                example: dict[str, Any] = {
                    "image": np.ascontiguousarray(image),
                    "label": self._labels[i],
                }
                if with_id:
                    example["id"] = key
                yield key, example

    def close(self) -> None:
        pass


def _labels(path: Path, labels: np.ndarray[Any, Any], count: int, modulo: int | None) -> list[int]:
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or len(labels) != count:
        raise SourceFormatError(
            f"{path}: {count} images but labels of shape {labels.shape}; expected "
            f"({count},) or ({count}, 1)"
        )
    if labels.dtype.kind == "f":
        labels = whole_numbers(labels, f"{path}: labels")
    if modulo is not None:
        labels = labels % modulo
    values: list[int] = labels.tolist()
    return values


def examples(source: Source) -> Examples:
    """Yield ``(id, {"image": ..., "label": ...[, "id": ...]})`` along the example axis."""
    arrays = _Arrays(source)
    return arrays.examples(0, arrays.length)


def _validate(options: Mapping[str, Any], features: object) -> str | None:
    modulo = options["label_modulo"]
    if modulo is not None and modulo < 1:
        return f"label_modulo must be a positive int, got {modulo}"
    if not 1 <= options["id_digits"] <= 20:
        return f"id_digits must be an int in 1..20, got {options['id_digits']}"
    return None


FORMAT = SourceFormat(
    name="mat",
    description="MATLAB v5 .mat files: an image array and a label array (needs scipy)",
    roles=(Role("mat"),),
    options={
        "images": Option("str", "X", "the image array, (height, width, channels, N)"),
        "labels": Option("str", "y", "the label array, (N,) or (N, 1)"),
        "example_axis": Option("int", -1, "the image array's axis along which examples lie"),
        "label_modulo": Option("int", None, "label = value % label_modulo"),
        "id_digits": Option("int", 5, "the id's least number of digits (train_00000: 5)"),
    },
    features=lambda options: (frozenset({"image", "label"}), frozenset({"id"})),
    examples=examples,
    validate=_validate,
    check=check,
    random_access=_Arrays,
)


def _vector(path: Path, name: str) -> np.ndarray[Any, Any]:
    array = load_arrays(path, [name])[name]
    if array.ndim == 2 and 1 in array.shape:
        array = array.reshape(-1)
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        raise SourceFormatError(
            f"{path}: array {name!r} must be a vector of numbers, got {array.dtype} {array.shape}"
        )
    return whole_numbers(array, f"{path}: array {name!r}")


def id_examples(source: Source) -> Examples:
    """Yield ``(file name, {"image": path, "label": int[, "file_name": name]})`` for each id
    of the split's id array, in its order."""
    options = source.options
    root = source.file("root")
    labels = _vector(source.file("labels"), options["labels_array"])
    ids = _vector(source.file("ids"), options["ids_array"])
    with_name = "file_name" in source.features
    for image_id in ids.tolist():
        if not 1 <= image_id <= len(labels):
            raise SourceFormatError(
                f"{source.file('ids')}: id {image_id} has no label: "
                f"{options['labels_array']!r} holds {len(labels)} (ids count from 1)"
            )
        name = options["file"].format(id=image_id)
        image = root / name
        if not image.is_file():
            raise SourceFormatError(f"{source.file('ids')}: id {image_id}: no image file {image}")
        example: dict[str, Any] = {
            "image": image,
            "label": int(labels[image_id - 1]) - options["label_base"],
        }
        if with_name:
            example["file_name"] = name
        yield name, example


ID_FORMAT = SourceFormat(
    name="mat_ids",
    description="image files named by the ids of a .mat array, labels in another (needs scipy)",
    roles=(Role("root"), Role("labels"), Role("ids")),
    options={
        "labels_array": Option("str", "labels", "the label array, indexed by id - 1"),
        "ids_array": Option("str", "ids", "the array of the split's image ids (from 1)"),
        "file": Option("str", "image_{id:05d}.jpg", "an image's file name, from its id"),
        "label_base": Option("int", 1, "the label of the first class in the label array"),
    },
    features=lambda options: (frozenset({"image", "label"}), frozenset({"file_name"})),
    examples=id_examples,
    check=check,
)
