"""MATLAB ``.mat`` files (v5, as SVHN ships them): an image array and a label array.

Reading them needs scipy, an optional extra (``pip install 'catalog[mat]'``), imported only
when a split in this format is prepared; without it the error names the extra, before
anything is downloaded. scipy's ``loadmat`` reads an array whole, so preparing a split takes
about its uncompressed size in memory (SVHN's extra split: 1.6 GB).

Options:

- ``images``: the image array, ``(height, width, channels, N)`` (default ``X``); examples
  lie along ``example_axis`` (default -1, the last axis, as in SVHN).
- ``labels``: the label array, ``(N,)`` or ``(N, 1)`` (default ``y``).
- ``label_modulo``: if given, label = value % label_modulo (SVHN stores the digit 0 as 10:
  ``label_modulo: 10``).

Examples hold ``image`` and ``label``, and ``id`` if the spec declares it (``train_00000``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat, running_id

__all__ = ["FORMAT", "check", "examples", "load_arrays"]

INSTALL = "pip install 'catalog[mat]'"


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
        data = scipy.io.loadmat(path, variable_names=names)
    except (ValueError, OSError, NotImplementedError, TypeError) as error:
        raise SourceFormatError(
            f"{path}: not a MATLAB v5 .mat file scipy can read ({error})"
        ) from None
    missing = [name for name in names if name not in data]
    if missing:
        held = [entry[0] for entry in scipy.io.whosmat(path)]
        raise SourceFormatError(f"{path}: no array {missing[0]!r}; it holds {held}")
    return {name: data[name] for name in names}


def examples(source: Source) -> Examples:
    """Yield ``(id, {"image": ..., "label": ...[, "id": ...]})`` along the example axis."""
    path = source.file("mat")
    options = source.options
    arrays = load_arrays(path, [options["images"], options["labels"]])
    images = arrays[options["images"]]
    try:
        images = np.moveaxis(images, options["example_axis"], 0)
    except ValueError:  # numpy's AxisError
        raise SourceFormatError(
            f"{path}: array {options['images']!r} of shape {images.shape} has no axis "
            f"{options['example_axis']} (options.example_axis)"
        ) from None
    labels = arrays[options["labels"]]
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or len(labels) != len(images):
        raise SourceFormatError(
            f"{path}: {len(images)} images but labels of shape {labels.shape}; expected "
            f"({len(images)},) or ({len(images)}, 1)"
        )
    if labels.dtype.kind == "f":
        if not np.array_equal(labels, np.round(labels)):
            raise SourceFormatError(f"{path}: labels must be whole numbers")
        labels = labels.astype(np.int64)
    if options["label_modulo"] is not None:
        labels = labels % options["label_modulo"]
    with_id = "id" in source.features
    for i, label in enumerate(labels.tolist()):
        key = running_id(source.split, i)
        example: dict[str, Any] = {"image": np.ascontiguousarray(images[i]), "label": label}
        if with_id:
            example["id"] = key
        yield key, example


def _validate(options: Mapping[str, Any], features: object) -> str | None:
    modulo = options["label_modulo"]
    if modulo is not None and modulo < 1:
        return f"label_modulo must be a positive int, got {modulo}"
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
    },
    features=lambda options: (frozenset({"image", "label"}), frozenset({"id"})),
    examples=examples,
    validate=_validate,
    check=check,
)
