"""Write a dataset for TensorFlow users: TFRecord files of Examples, or a TFDS directory.

Both write each split as ``<name>-<split>.tfrecord-00000-of-00001`` holding one
``tf.train.Example`` per example in the split's order, serialized the way TFDS does
(`catalog.interop.tfds.codec`): keys are feature paths (``objects/bbox``), images PNG or JPEG files
(raw images are PNG-encoded, PNG/JPEG ones copied byte for byte). ``tfds`` adds what
``tfds.builder_from_directory`` reads: features.json, dataset_info.json (TFDS's camelCase
protobuf JSON) and ``<feature>.labels.txt`` class names, under ``<out>/<name>/<version>/``.

Files appear only once complete: each TFRecord file is renamed into place when written, and
a TFDS directory is written beside its target and renamed into place whole.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from catalog.errors import SpecError
from catalog.info.dataset_info import DatasetInfo
from catalog.interop.tfds.codec import ExampleCodec, image_paths
from catalog.interop.tfds.features import to_tfds_json
from catalog.interop.tfrecord.io import TFRecordWriter
from catalog.read.data_source import DataSource, Decoder, open_sources
from catalog.read.options import ReadOptions
from catalog.storage.data_dir import Location, Store

__all__ = ["ExportFormat", "export"]

ExportFormat = Literal["tfrecord", "tfds"]
_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def _write_split(ds: DataSource, codec: ExampleCodec, path: Path) -> int:
    with TFRecordWriter(path) as writer:
        for example in ds:
            writer.write(codec.encode(example))
    return writer.count


def _tfds_info(info: DatasetInfo, counts: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": info.name,
        "version": info.version,
        "description": info.description,
        "citation": info.citation,
        "fileFormat": "tfrecord",
        "splits": [
            {
                "name": split,
                "numBytes": str(num_bytes),
                "shardLengths": [str(count)],
                "filepathTemplate": _TEMPLATE,
            }
            for split, (count, num_bytes) in counts.items()
        ],
    }
    if info.homepage:
        data["location"] = {"urls": [info.homepage]}
    if info.config:
        data["configName"] = info.config
        data["configDescription"] = info.config_description
    if info.supervised_keys:
        items = [_nest(key) for key in info.supervised_keys]
        data["supervisedKeys"] = {"tuple": {"items": items}}
    return data


def _nest(key: str | dict[str, str]) -> dict[str, Any]:
    """A supervised key as TFDS's ``SupervisedKeys.Nest`` in JSON: a feature key or a dict."""
    if isinstance(key, dict):
        return {"dict": {"dict": {name: {"featureKey": k} for name, k in key.items()}}}
    return {"featureKey": key}


def export(
    info: DatasetInfo,
    folder: str | Location,
    out: str | Path,
    *,
    format: ExportFormat = "tfds",
    overwrite: bool = False,
    store: Store | None = None,
) -> Path:
    """Write every split of the dataset in `folder` (whose info is `info`: catalog's layout or
    TFDS's) of the data dir `store` (None: the store holding `folder`) into `out`; return the
    folder written (`out` for tfrecord, ``out/<name>/<version>`` for tfds)."""
    out = Path(out).expanduser()
    codec = ExampleCodec(info.features)
    labels: dict[str, list[str]] = {}
    features_json = to_tfds_json(info.features, labels)  # refuses what TFDS cannot express
    skip: dict[str, Decoder] = dict.fromkeys(image_paths(info.features), False)
    splits = open_sources(store, folder, info, None, ReadOptions(decoders=skip))
    assert isinstance(splits, dict)  # every split
    if format == "tfrecord":
        out.mkdir(parents=True, exist_ok=True)
        for split, ds in splits.items():
            _write_split(ds, codec, out / f"{info.name}-{split}.tfrecord-00000-of-00001")
        return out
    target = out / info.name
    if info.config:
        target /= info.config
    target /= info.version
    if target.exists() and not overwrite:
        raise SpecError(f"{target} exists already; pass --overwrite to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.incomplete-", dir=target.parent))
    try:
        counts = {}
        for split, ds in splits.items():
            path = work / f"{info.name}-{split}.tfrecord-00000-of-00001"
            counts[split] = (_write_split(ds, codec, path), path.stat().st_size)
        for file, names in labels.items():
            (work / file).write_text("".join(f"{n}\n" for n in names), "utf-8")
        (work / "features.json").write_text(json.dumps(features_json, indent=2) + "\n")
        (work / "dataset_info.json").write_text(
            json.dumps(_tfds_info(info, counts), indent=2) + "\n"
        )
        work.chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target
