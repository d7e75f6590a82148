"""Datasets opened by the path of their directory, without a builder: one TensorFlow
Datasets prepared (``~/tensorflow_datasets/mnist/3.0.1``, see `catalog.interop.tfds`), or one
catalog prepared or imported (``<data dir>/mnist/3.0.1``, holding catalog's dataset_info.json).
A path that is a generation's pointer (`catalog.storage.generations`) is resolved once: the info
and the shards are read from the one generation it names.

The resolver (`catalog.api.resolve`) answers a dataset directory given by path with
`local_dataset`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.interop.tfds.directory import is_tfds_dir, read_tfds_info
from catalog.storage.generations import Pin, pin

__all__ = [
    "is_prepared_dir",
    "local_dataset",
]


def is_prepared_dir(path: str | os.PathLike[str]) -> bool:
    """Whether `path` holds a dataset catalog prepared (its dataset_info.json names the
    record format)."""
    info = Path(path).expanduser() / INFO_FILE
    if not info.is_file():
        return False
    try:
        data = json.loads(info.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "record_format" in data


def local_dataset(path: str | os.PathLike[str]) -> tuple[Pin, DatasetInfo] | None:
    """The dataset directory at `path` (the generation it names, pinned) and its info, or
    None when it is not one."""
    generation = pin(Path(path).expanduser())
    folder = generation.path
    if is_tfds_dir(folder):
        return generation, read_tfds_info(folder)
    if is_prepared_dir(folder):
        return generation, DatasetInfo.read(folder)
    return None
