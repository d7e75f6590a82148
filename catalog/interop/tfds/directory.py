"""Open a directory TensorFlow Datasets prepared (``~/tensorflow_datasets/mnist/3.0.1/``),
read-only, as catalog data sources.

Such a directory holds ``dataset_info.json`` (protobuf JSON, camelCase, 64-bit numbers as
strings: ``"shardLengths": ["15000", ...]``), ``features.json`` (see
`catalog.interop.tfds.features`), ``<feature>.labels.txt`` files of class names, and shards
``<name>-<split>.<tfrecord|array_record>-00000-of-00004`` of serialized tf.train.Examples.
Splits, shard files and their example counts come from dataset_info.json; records are read in
the order they are stored. The DataSources are catalog's own (the same readers, the same
contract); ArrayRecord shards go through the same ArrayRecord reader as catalog's datasets,
TFRecord shards through an index of record offsets built once into the index dir (never
into the TFDS directory, which is never written to).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, overload

from catalog.errors import DatasetNotFoundError, NotPreparedError, SpecError
from catalog.features import FeaturesDict
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
from catalog.info.splits import SplitArg, SplitsArg
from catalog.interop.tfds import RECORD_FORMAT_NAME
from catalog.interop.tfds.features import from_tfds_json
from catalog.interop.tfds.record_format import TFDS_RECORDS
from catalog.read.array_record import open_reader
from catalog.read.data_source import DataSource, Decoder, open_sources

__all__ = ["RECORD_FORMAT_NAME", "is_tfds_dir", "open_tfds", "read_tfds_info"]

_FILE_FORMATS = ("tfrecord", "array_record")
_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as error:
        raise SpecError(f"{path}: unreadable ({error})") from None


def is_tfds_dir(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a directory TFDS prepared: TFDS's dataset_info.json + features.json."""
    folder = Path(path).expanduser()
    info = folder / "dataset_info.json"
    if not (info.is_file() and (folder / "features.json").is_file()):
        return False
    try:
        data = json.loads(info.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "record_format" not in data  # catalog's own has one


def _shard_name(template: str, dataset: str, split: str, fmt: str, i: int, n: int) -> str:
    return (
        template.replace("{DATASET}", dataset)
        .replace("{SPLIT}", split)
        .replace("{FILEFORMAT}", fmt)
        .replace("{SHARD_X_OF_Y}", f"{i:05d}-of-{n:05d}")
        .replace("{SHARD_INDEX}", f"{i:05d}")
        .replace("{NUM_SHARDS}", f"{n:05d}")
    )


def _count_records(path: Path, fmt: str) -> int:
    """How many records a shard holds (for dataset_info.json files without shardLengths)."""
    if fmt == "tfrecord":
        from catalog.interop.tfrecord.index import record_offsets  # TFRecord shards only

        return len(record_offsets(path)) - 1
    # TFDS compresses its shards (zstd): opened through open_reader, so a process forked after
    # this refuses them instead of crashing (see catalog.storage.shards).
    reader = open_reader(str(path), compressed=True)
    try:
        return int(reader.num_records())
    finally:
        reader.close()


def _supervised_keys(data: Mapping[str, Any]) -> tuple[str, str] | None:
    keys = data.get("supervisedKeys")
    if not keys:
        return None
    if "input" in keys and "output" in keys:  # the older form
        return str(keys["input"]), str(keys["output"])
    items = keys.get("tuple", {}).get("items", [])
    names = [item.get("featureKey") for item in items]
    if len(names) == 2 and all(isinstance(n, str) for n in names):
        return names[0], names[1]
    return None  # dict-shaped supervised keys: catalog's as_supervised takes two names


def read_tfds_info(path: str | os.PathLike[str]) -> DatasetInfo:
    """The DatasetInfo of a TFDS-prepared directory (features, splits, shards, metadata)."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise DatasetNotFoundError(f"{folder}: no such directory")
    info_path = folder / "dataset_info.json"
    data = _load_json(info_path)
    features = from_tfds_json(_load_json(folder / "features.json"), folder)
    if not isinstance(features, FeaturesDict):
        raise SpecError(f"{folder / 'features.json'}: the top feature must be a FeaturesDict")
    fmt = data.get("fileFormat") or "tfrecord"
    if fmt not in _FILE_FORMATS:
        raise SpecError(
            f"{info_path}: fileFormat {fmt!r} is not supported; catalog reads "
            f"{', '.join(_FILE_FORMATS)} shards"
        )
    name = str(data.get("name") or folder.parent.name)
    splits = {}
    for split in data.get("splits", []):
        split_name = str(split["name"])
        lengths: list[int | None] = [int(n) for n in split.get("shardLengths", [])]
        if not lengths:  # older TFDS versions give the number of shards only: count records
            lengths = [None] * int(split.get("numShards", 1))
        template = split.get("filepathTemplate") or _TEMPLATE
        shards = []
        for i, count in enumerate(lengths):
            file = _shard_name(template, name, split_name, fmt, i, len(lengths))
            shard_path = folder / file
            if not shard_path.is_file():
                raise NotPreparedError(
                    f"{shard_path}: shard {i} of split {split_name!r} that {info_path} lists is "
                    "missing; prepare the dataset again with TFDS, or copy the whole directory"
                )
            if count is None:
                count = _count_records(shard_path, fmt)
            shards.append(ShardInfo(file, count, shard_path.stat().st_size, ""))
        splits[split_name] = SplitInfo(
            split_name, sum(s.num_examples for s in shards), tuple(shards)
        )
    if not splits:
        raise SpecError(f"{info_path}: no splits")
    urls = data.get("location", {}).get("urls") or [""]
    return DatasetInfo(
        name=name,
        version=str(data.get("version") or folder.name),
        features=features,
        splits=splits,
        description=str(data.get("description", "")),
        homepage=str(urls[0]),
        citation=str(data.get("citation", "")),
        supervised_keys=_supervised_keys(data),
        record_format={"name": TFDS_RECORDS.name, "file_format": fmt},
        config=data.get("configName") or None,
        config_description=str(data.get("configDescription", "")),
    )


@overload
def open_tfds(
    path: str | os.PathLike[str],
    *,
    split: None = None,
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
) -> dict[str, DataSource]: ...
@overload
def open_tfds(
    path: str | os.PathLike[str],
    *,
    split: SplitArg,
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
) -> DataSource: ...
@overload
def open_tfds(
    path: str | os.PathLike[str],
    *,
    split: list[SplitArg] | tuple[SplitArg, ...],
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
) -> list[DataSource]: ...
def open_tfds(
    path: str | os.PathLike[str],
    *,
    split: SplitsArg | None = None,
    decoders: Mapping[str, Decoder] | None = None,
    as_supervised: bool = False,
) -> DataSource | list[DataSource] | dict[str, DataSource]:
    """Data sources over a TFDS-prepared directory: ``{split: DataSource}``, one DataSource
    for a split spec (``"train[:10%]"``, ``"train[:2shard]"``: shard bounds use the directory's
    shard lengths), or a list for a list of specs. Read-only; no TensorFlow.

    >>> ds = open_tfds("~/tensorflow_datasets/mnist/3.0.1")   # doctest: +SKIP
    >>> ds["test"][0]["image"].shape                         # doctest: +SKIP
    (28, 28, 1)
    """
    folder = Path(path).expanduser()
    info = read_tfds_info(folder)
    return open_sources(folder, info, split, decoders=decoders, as_supervised=as_supervised)
