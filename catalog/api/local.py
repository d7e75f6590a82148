"""Datasets opened by the path of their directory, without a builder: one TensorFlow
Datasets prepared (``~/tensorflow_datasets/mnist/3.0.1``, see `catalog.interop.tfds`), or one
catalog prepared or imported (``<data dir>/mnist/3.0.1``, holding catalog's dataset_info.json).
A path that is a generation's pointer (`catalog.storage.generations`) is resolved once: the info
and the shards are read from the one generation it names.

`catalog.data_source(path)`, `catalog info PATH`, `catalog show PATH` and `catalog export
PATH` use `local_info` and `open_local`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from catalog.errors import DatasetNotFoundError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.info.splits import SplitsArg
from catalog.interop.tfds.directory import is_tfds_dir, read_tfds_info
from catalog.read.data_source import DataSource, Decoder, open_sources
from catalog.spec.registry import resolve
from catalog.storage.generations import Pin, pin
from catalog.storage.remote import RemoteDir

__all__ = [
    "dataset_dir",
    "is_prepared_dir",
    "local_dataset",
    "local_info",
    "open_local",
    "prepared_by_name",
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


def local_info(path: str | os.PathLike[str]) -> DatasetInfo | None:
    """The info of the dataset directory at `path`, or None when it is not one."""
    local = local_dataset(path)
    return None if local is None else local[1]


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


def open_local(
    path: str | os.PathLike[str],
    info: DatasetInfo,
    *,
    split: SplitsArg | None = None,
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
) -> DataSource | list[DataSource] | dict[str, DataSource]:
    """Data sources over the dataset directory `path` whose info is `info` (when `path` is a
    pointer that names another generation by now, `DataSource` says so)."""
    folder = Path(path).expanduser()
    return open_sources(folder, info, split, decoders=decoders, as_supervised=as_supervised)


def prepared_by_name(name: str, data_dir: Path) -> Path | None:
    """The directory of a dataset prepared in `data_dir` under `name` that no builder
    describes (one `catalog.prepare_files` / ``catalog prepare PATH --name NAME`` prepared):
    ``<data_dir>/<name>/<version>``, the highest version there; None when there is none."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        return None
    folder = data_dir / name
    if not folder.is_dir():
        return None
    versions = []
    for child in folder.iterdir():
        parts = child.name.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts) and local_dataset(child):
            versions.append((tuple(int(p) for p in parts), child))
    return max(versions)[1] if versions else None


def dataset_dir(name: str, data_dir: Path | RemoteDir) -> Path | None:
    """Where the CLI's info/show read `name` from without a builder: `name` itself when it
    is a dataset directory, else (when no builder has that name) a dataset prepared from
    local files under it in a local `data_dir`; None when a builder is to be used."""
    if local_dataset(name) is not None:
        return Path(name).expanduser()
    try:
        resolve(name)
    except DatasetNotFoundError:
        return None if isinstance(data_dir, RemoteDir) else prepared_by_name(name, data_dir)
    return None
