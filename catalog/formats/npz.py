"""NumPy ``.npz`` files: one array per feature, one example per index of the first axis.

Loaded with ``allow_pickle=False``: a file holding object arrays (which only unpickling could
read) is refused, since nothing downloaded is ever unpickled. Each array is read whole when
the split is prepared (a compressed ``.npz`` cannot be memory-mapped); this suits files of
tens of megabytes, like CMATERdb's.

Option ``arrays``: ``{feature: array name}``, default ``{image: images, label: labels}``.
Examples hold exactly those features; the key is the index.

Format ``npy`` reads two plain ``.npy`` files instead (roles ``images`` and ``labels``, as
CIFAR-10.1 and MNIST-C ship them), memory-mapped, so a file of any size is read in bounded
memory; a grayscale image array (N, h, w) fills an Image of 1 channel.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "NPY_FORMAT", "examples", "npy_examples"]


def examples(source: Source) -> Examples:
    """Yield ``(index, {feature: array[index], ...})`` for every index of the arrays."""
    path = source.file("arrays")
    wanted: Mapping[str, str] = source.options["arrays"]
    try:
        npz = np.load(path, allow_pickle=False)
        if not isinstance(npz, np.lib.npyio.NpzFile):
            raise SourceFormatError(f"{path}: a single .npy array, not an .npz archive")
        with npz:
            names = list(npz.files)
            arrays = {f: npz[name] for f, name in wanted.items() if name in names}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        if isinstance(error, SourceFormatError):
            raise
        raise SourceFormatError(
            f"{path}: not an .npz file NumPy can read without pickle ({error})"
        ) from None
    missing = [name for name in wanted.values() if name not in names]
    if missing:
        raise SourceFormatError(f"{path}: no array {missing[0]!r}; it holds {', '.join(names)}")
    lengths = {feature: len(a) if a.ndim else 0 for feature, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        counts = ", ".join(f"{wanted[f]} {n}" for f, n in lengths.items())
        raise SourceFormatError(f"{path}: the arrays differ in length along axis 0: {counts}")
    for i in range(next(iter(lengths.values()))):
        yield str(i), {feature: array[i] for feature, array in arrays.items()}


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
