"""NumPy ``.npz`` files: one array per feature, one example per index of the first axis.

Loaded with ``allow_pickle=False``: a file holding object arrays (which only unpickling could
read) is refused, since nothing downloaded is ever unpickled. Each array is read whole when
the split is prepared (a compressed ``.npz`` cannot be memory-mapped); this suits files of
tens of megabytes, like CMATERdb's.

Option ``arrays``: ``{feature: array name}``, default ``{image: images, label: labels}``.
Examples hold exactly those features; the key is the index.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]


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
