"""A TFDS directory that is not on this machine: in a bucket (``gs://tfds-data/datasets/mnist/
3.0.1``, ``s3://...``) or on a web server (``https://...``), as TFDS serves the datasets it has
no generation code for. `fetch_tfds_dir` copies it into a local folder: its metadata
(dataset_info.json, features.json, the ClassLabel names files), then each shard its
dataset_info.json lists, one at a time; the TFDS directory reader
(`catalog.interop.tfds.directory`) then reads the copy as any TFDS directory, and
``catalog import URL`` (`catalog.api.exchange.import_dataset`) turns it into a catalog
dataset, its shards hashed, in any data dir.

A shard the listing (or the server) does not have is a ShardError naming it; nothing of the copy
is kept then (the caller's folder is a scratch dir)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from catalog.errors import DatasetNotFoundError, NotPreparedError, ShardError, SourceFormatError
from catalog.interop.tfds.directory import shard_files
from catalog.interop.tfds.features import labels_file_name
from catalog.storage.remote import RemoteDir
from catalog.storage.remote_reads import attempt, cat

__all__ = ["fetch_tfds_dir"]

#: The largest metadata file fetched (TFDS's are a few KiB; a large features.json some hundreds).
_MAX_JSON = 64 << 20


def fetch_tfds_dir(remote: RemoteDir, into: Path) -> Path:
    """Copy the TFDS directory at `remote` into the folder `into` (created); return it.

    Raises:
        DatasetNotFoundError: no TFDS directory there (no dataset_info.json + features.json).
        ShardError: a shard its dataset_info.json lists is not there.
    """
    into.mkdir(parents=True, exist_ok=True)
    metadata = {}
    for name in ("dataset_info.json", "features.json"):
        try:
            raw = cat(remote / name)
        except NotPreparedError:  # no such object
            raise DatasetNotFoundError(
                f"{remote}: no TFDS directory there (no {name}); give the URL of "
                "<name>/<version>/ as TFDS wrote it"
            ) from None
        if len(raw) > _MAX_JSON:
            raise SourceFormatError(f"{remote / name}: larger than {_MAX_JSON >> 20} MiB")
        (into / name).write_bytes(raw)
        try:
            metadata[name] = json.loads(raw)
        except ValueError:
            metadata[name] = {}  # the reader says what is wrong with it, once copied
    for path in sorted(set(_class_labels(metadata["features.json"], ""))):
        file = labels_file_name(path)
        try:
            (into / file).write_bytes(cat(remote / file))
        except NotPreparedError:
            continue  # TFDS keeps names in features.json's numClasses only: as TFDS reads it
    info = metadata["dataset_info.json"]
    fs = remote.filesystem()
    dataset = remote.url.rstrip("/").rsplit("/", 2)[-2]  # <name>/<version>: as TFDS names it
    for file in shard_files(info if isinstance(info, Mapping) else {}, dataset):
        shard, local = remote / file, str(into / file)
        try:
            attempt(partial(fs.get_file, shard.path, local), shard)
        except NotPreparedError:
            raise ShardError(
                f"{remote / file}: a shard {remote / 'dataset_info.json'} lists is not there; "
                "copy the whole directory TFDS wrote"
            ) from None
    return into


def _class_labels(node: Any, path: str) -> Iterator[str]:
    """The feature paths of every ClassLabel in a TFDS features.json (`node`)."""
    if not isinstance(node, Mapping):
        return
    if str(node.get("pythonClassName", "")).endswith(".ClassLabel"):
        yield path
    children = node.get("featuresDict", {})
    if isinstance(children, Mapping) and isinstance(children.get("features"), Mapping):
        for name, child in children["features"].items():
            yield from _class_labels(child, f"{path}/{name}" if path else str(name))
    sequence = node.get("sequence")
    if isinstance(sequence, Mapping):
        yield from _class_labels(sequence.get("feature"), path)
