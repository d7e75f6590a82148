"""NumPy ``.npz`` files: one array per feature, one example per index of the first axis.

Loaded with ``allow_pickle=False``: a file holding object arrays (which only unpickling could
read) is refused, since nothing downloaded is ever unpickled. When preparing, each array is
staged once (streamed out of the zip, compressed or not) to a ``.npy`` file in the work
directory and read from there a block of examples at a time, so memory stays bounded however
big the arrays are; read outside a prepare, the arrays are read whole.

Option ``arrays``: ``{feature: array name}``, default ``{image: images, label: labels}``.
Examples hold exactly those features; the key is the index.

Format ``npy`` reads two plain ``.npy`` files instead (roles ``images`` and ``labels``, as
CIFAR-10.1 and MNIST-C ship them), memory-mapped, so a file of any size is read in bounded
memory; a grayscale image array (N, h, w) fills an Image of 1 channel.
"""

from __future__ import annotations

import os
import shutil
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.arrays.matfile import OnDiskArray, npy_array
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "NPY_FORMAT", "examples", "npy_examples"]

_BLOCK = 1024  # examples read at a time


_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _stage(npz: np.lib.npyio.NpzFile, name: str, folder: Path) -> OnDiskArray:
    """The array `name`, copied once (streamed, never whole in memory) to `folder` as .npy, to
    be read a block at a time; an array of objects (only pickle could read it) is refused."""
    staged = folder / f"{name}.npy"
    archive = npz.zip
    assert archive is not None  # an NpzFile opened from a path keeps its zip open
    if not staged.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        member = name if name in archive.namelist() else f"{name}.npy"
        with archive.open(member) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                dtype = np.lib.format.read_array_header_1_0(f)[2]
            else:
                dtype = np.lib.format.read_array_header_2_0(f)[2]
            if dtype.hasobject:
                raise ValueError(f"array {name!r} holds Python objects, which need pickle")
        partial = staged.with_name(f"{staged.name}.partial-{os.getpid()}")
        with archive.open(member) as f, open(partial, "wb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
        partial.replace(staged)
    return npy_array(staged)


class _Arrays:
    """The arrays by position: staged to .npy files read a block at a time when the source
    has a scratch folder (bounded memory however big the arrays), else read whole."""

    def __init__(self, source: Source) -> None:
        path = source.file("arrays")
        wanted: Mapping[str, str] = source.options["arrays"]
        try:
            npz = np.load(path, allow_pickle=False)
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise SourceFormatError(f"{path}: a single .npy array, not an .npz archive")
            with npz:
                names = list(npz.files)
                missing = [name for name in wanted.values() if name not in names]
                if missing:
                    raise SourceFormatError(
                        f"{path}: no array {missing[0]!r}; it holds {', '.join(names)}"
                    )
                scratch = source.scratch
                self._arrays: dict[str, np.ndarray[Any, Any] | OnDiskArray] = {
                    f: _stage(npz, name, scratch / "npz") if scratch else npz[name]
                    for f, name in wanted.items()
                }
        except _ERRORS as error:
            if isinstance(error, SourceFormatError):
                raise
            raise SourceFormatError(
                f"{path}: not an .npz file NumPy can read without pickle ({error})"
            ) from None
        lengths = {f: a.shape[0] if a.ndim else 0 for f, a in self._arrays.items()}
        if len(set(lengths.values())) != 1:
            counts = ", ".join(f"{wanted[f]} {n}" for f, n in lengths.items())
            raise SourceFormatError(f"{path}: the arrays differ in length along axis 0: {counts}")
        self._length = next(iter(lengths.values()))

    @property
    def length(self) -> int:
        return self._length

    def examples(self, start: int, stop: int) -> Examples:
        for first in range(start, min(stop, self._length), _BLOCK):
            last = min(first + _BLOCK, stop, self._length)
            blocks = {
                f: a[first:last] if isinstance(a, np.ndarray) else a.read(0, first, last)
                for f, a in self._arrays.items()
            }
            for i in range(last - first):
                yield str(first + i), {f: block[i] for f, block in blocks.items()}

    def close(self) -> None:
        self._arrays = {}


def examples(source: Source) -> Examples:
    """Yield ``(index, {feature: array[index], ...})`` for every index of the arrays."""
    arrays = _Arrays(source)
    return arrays.examples(0, arrays.length)


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(options["arrays"]), frozenset()


def _validate(options: Mapping[str, Any], features: Any) -> str | None:
    return None if options["arrays"] else "arrays must map at least one feature to an array"


FORMAT = SourceFormat(
    name="npz",
    description="a NumPy .npz file: one array per feature, examples along axis 0 (no pickle)",
    roles=(Role("arrays"),),
    options={
        "arrays": Option(
            "str_map", {"image": "images", "label": "labels"}, "feature -> array name"
        ),
    },
    features=_features,
    examples=examples,
    validate=_validate,
    random_access=_Arrays,
)


def _load_npy(path: Path) -> np.ndarray[Any, Any]:
    """A .npy file, memory-mapped when it is not compressed (nothing is unpickled)."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise SourceFormatError(
            f"{path}: not a .npy file NumPy can read without pickle ({error})"
        ) from None
    if not isinstance(array, np.ndarray):
        raise SourceFormatError(f"{path}: an .npz archive, not a single .npy array")
    return array


def npy_examples(source: Source) -> Examples:
    """Yield ``(index, {"image": images[index], "label": labels[index]})`` from two .npy
    files, memory-mapped: memory stays bounded whatever their size."""
    paths = {role: source.file(role) for role in ("images", "labels")}
    images, labels = (_load_npy(paths[role]) for role in ("images", "labels"))
    if images.ndim < 3 or labels.ndim != 1:
        raise SourceFormatError(
            f"{paths['images']} and {paths['labels']}: expected images (N, height, width[, "
            f"channels]) and labels (N,), got shapes {images.shape} and {labels.shape}"
        )
    if len(images) != len(labels):
        raise SourceFormatError(
            f"{paths['images']} holds {len(images)} images but {paths['labels']} holds "
            f"{len(labels)} labels"
        )
    if labels.dtype.kind not in "iu":
        raise SourceFormatError(f"{paths['labels']}: expected integer labels, got {labels.dtype}")
    for i in range(len(images)):
        yield str(i), {"image": np.asarray(images[i]), "label": int(labels[i])}


NPY_FORMAT = SourceFormat(
    name="npy",
    description="two NumPy .npy files: images (N, h, w[, c]) and labels (N,) (no pickle)",
    roles=(Role("images"), Role("labels")),
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=npy_examples,
)
