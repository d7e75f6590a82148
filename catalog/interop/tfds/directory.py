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

The directory was written by other code, so nothing in it is trusted: a dataset_info.json or
features.json that is not JSON, a split without a name, a shard length that is not a count
(``"-5"``, ``"abc"``, ``"1e30"``) or more records than a TFRecord shard has room for is a
SourceFormatError naming the file and the field, and every record is checked against its
features as it is decoded (`catalog.interop.tfds.codec`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, overload

from catalog._util.small_file import read_small
from catalog.errors import DatasetNotFoundError, ShardError, SourceFormatError
from catalog.features import FeaturesDict, SupervisedKeys
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
from catalog.info.splits import SplitArg, SplitsArg
from catalog.interop.tfds import RECORD_FORMAT_NAME
from catalog.interop.tfds.features import from_tfds_json
from catalog.interop.tfds.record_format import TFDS_RECORDS
from catalog.read.array_record import open_reader
from catalog.read.data_source import DataSource, Decoder, open_sources
from catalog.read.options import ReadOptions

__all__ = ["RECORD_FORMAT_NAME", "is_tfds_dir", "open_tfds", "read_tfds_info", "shard_files"]

_FILE_FORMATS = ("tfrecord", "array_record")
_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


#: The largest file of JSON metadata read (TFDS's are a few KiB; features.json of a large
#: dataset some hundreds).
_MAX_JSON = 64 << 20
#: The most shards and the most examples a shard may declare (int64, as TFDS's protobuf).
_MAX_COUNT = (1 << 63) - 1
_TFRECORD_FRAME = 16  # bytes around each TFRecord record: a shard holds at most size/16
#: The most shard files a copy of a TFDS directory fetches (TFDS's largest datasets have some
#: thousands of shards per split).
_MAX_FILES = 100_000


def _load_json(path: Path) -> Any:
    """The JSON object in `path`; SourceFormatError (naming the file) for anything else."""
    too_large = f"larger than {_MAX_JSON >> 20} MiB; not TFDS metadata"
    raw = read_small(path, _MAX_JSON, SourceFormatError, too_large=too_large)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise SourceFormatError(
            f"{path}: not valid JSON ({error}); copy the file again from the directory TFDS "
            "wrote, or prepare the dataset again with TFDS"
        ) from None
    if not isinstance(data, dict):
        raise SourceFormatError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def is_tfds_dir(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a directory TFDS prepared: TFDS's dataset_info.json + features.json.

    A dataset_info.json that is not readable JSON still makes one (catalog's own dataset
    directories have no features.json): reading it then says what is wrong with it."""
    folder = Path(path).expanduser()
    info = folder / "dataset_info.json"
    if not (info.is_file() and (folder / "features.json").is_file()):
        return False
    try:
        data = json.loads(info.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return True
    return not (isinstance(data, dict) and "record_format" in data)  # catalog's own has one


def _field(info_path: Path, where: str, value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SourceFormatError(f"{info_path}: {where} is {value!r}; expected {what}")
    return value


def _count(info_path: Path, where: str, value: Any) -> int:
    """A count in dataset_info.json: a whole number >= 0 (protobuf JSON writes int64 as a
    string of digits), at most int64's largest."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 19):
        raise SourceFormatError(
            f"{info_path}: {where} is {value!r}; expected a count (a whole number >= 0): the "
            "file is damaged, copy it again or prepare the dataset again with TFDS"
        )
    count = int(text)
    if count > _MAX_COUNT:
        raise SourceFormatError(f"{info_path}: {where} is {value!r}; more than int64 holds")
    return count


def _shard_name(template: str, dataset: str, split: str, fmt: str, i: int, n: int) -> str:
    return (
        template.replace("{DATASET}", dataset)
        .replace("{SPLIT}", split)
        .replace("{FILEFORMAT}", fmt)
        .replace("{SHARD_X_OF_Y}", f"{i:05d}-of-{n:05d}")
        .replace("{SHARD_INDEX}", f"{i:05d}")
        .replace("{NUM_SHARDS}", f"{n:05d}")
    )


def shard_files(data: Mapping[str, Any], folder_name: str) -> list[str]:
    """The shard files a TFDS dataset_info.json (`data`, of the directory named
    `folder_name`'s dataset) lists, in split order: what a copy of the directory needs beside
    its metadata. A split that gives only its number of shards lists that many; malformed
    metadata is read as it is and refused by `read_tfds_info` once copied."""
    fmt = str(data.get("fileFormat") or "tfrecord")
    name = str(data.get("name") or folder_name)
    files = []
    for split in data.get("splits") or []:
        if not isinstance(split, dict) or not isinstance(split.get("name"), str):
            continue
        lengths = split.get("shardLengths") or []
        count = len(lengths) if isinstance(lengths, list) and lengths else split.get("numShards", 1)
        if not isinstance(count, (int, str)) or not str(count).isdigit():
            continue
        template = split.get("filepathTemplate") or _TEMPLATE
        if isinstance(template, str):
            n = min(int(count), _MAX_FILES)
            files += [_shard_name(template, name, split["name"], fmt, i, n) for i in range(n)]
    return files


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


def _supervised_keys(data: Mapping[str, Any]) -> SupervisedKeys | None:
    keys = data.get("supervisedKeys")
    if not keys:
        return None
    if "input" in keys and "output" in keys:  # the older form
        return str(keys["input"]), str(keys["output"])
    items = keys.get("tuple", {}).get("items", [])
    if len(items) != 2 or not isinstance(items[1].get("featureKey"), str):
        return None  # a weight key, or nests catalog's as_supervised does not take
    target = str(items[1]["featureKey"])
    if isinstance(items[0].get("featureKey"), str):
        return str(items[0]["featureKey"]), target
    inner = items[0].get("dict", {}).get("dict")
    if isinstance(inner, dict) and inner:  # a dict of feature keys, sorted as TFDS reads it
        named = {str(k): v.get("featureKey") for k, v in sorted(inner.items())}
        if all(isinstance(v, str) for v in named.values()):
            return named, target
    return None


def read_tfds_info(path: str | os.PathLike[str]) -> DatasetInfo:
    """The DatasetInfo of a TFDS-prepared directory (features, splits, shards, metadata)."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise DatasetNotFoundError(f"{folder}: no such directory")
    info_path = folder / "dataset_info.json"
    data = _load_json(info_path)
    encodings: dict[str, str] = {}  # Tensors stored as bytes, for the codec
    features = from_tfds_json(_load_json(folder / "features.json"), folder, encodings=encodings)
    if not isinstance(features, FeaturesDict):
        raise SourceFormatError(
            f"{folder / 'features.json'}: the top feature must be a FeaturesDict"
        )
    fmt = data.get("fileFormat") or "tfrecord"
    if fmt not in _FILE_FORMATS:
        raise SourceFormatError(
            f"{info_path}: fileFormat {fmt!r} is not supported; catalog reads "
            f"{', '.join(_FILE_FORMATS)} shards"
        )
    name = str(data.get("name") or folder.parent.name)
    splits = {}
    split_list = _field(info_path, "splits", data.get("splits", []), list, "a list of splits")
    for n, split in enumerate(split_list):
        where = f"splits[{n}]"
        _field(info_path, where, split, dict, "a split (an object with a name)")
        split_name = _field(info_path, f"{where}.name", split.get("name"), str, "a split name")
        if not split_name or split_name in splits:
            raise SourceFormatError(
                f"{info_path}: {where}.name {split_name!r} is empty or repeated"
            )
        where = f"split {split_name!r}"
        declared = _field(info_path, f"{where}: shardLengths", split.get("shardLengths", []),
                          list, "a list of counts")  # fmt: skip
        lengths: list[int | None] = [
            _count(info_path, f"{where}: shardLengths[{i}]", v) for i, v in enumerate(declared)
        ]
        if not lengths:  # older TFDS versions give the number of shards only: count records
            num_shards = _count(info_path, f"{where}: numShards", split.get("numShards", 1))
            if num_shards > sum(1 for _ in folder.iterdir()):
                raise SourceFormatError(
                    f"{info_path}: {where}: numShards is {num_shards}, more than the files "
                    f"in {folder}"
                )
            lengths = [None] * num_shards
        template = split.get("filepathTemplate") or _TEMPLATE
        _field(info_path, f"{where}: filepathTemplate", template, str, "a file name template")
        shards = []
        for i, count in enumerate(lengths):
            file = _shard_name(template, name, split_name, fmt, i, len(lengths))
            shard_path = folder / file
            if not shard_path.is_file():  # a shard of a prepared dataset: ShardError (exit 3)
                raise ShardError(
                    f"{shard_path}: shard {i} of split {split_name!r} that {info_path} lists is "
                    "missing; prepare the dataset again with TFDS, or copy the whole directory"
                )
            size = shard_path.stat().st_size
            if count is None:
                count = _count_records(shard_path, fmt)
            elif fmt == "tfrecord" and count * _TFRECORD_FRAME > size:
                raise SourceFormatError(
                    f"{info_path}: {where}: shardLengths[{i}] is {count}, but {shard_path.name} "
                    f"has {size} bytes, room for at most {size // _TFRECORD_FRAME} records"
                )
            shards.append(ShardInfo(file, count, size, ""))
        splits[split_name] = SplitInfo(
            split_name, sum(s.num_examples for s in shards), tuple(shards)
        )
    if not splits:
        raise SourceFormatError(f"{info_path}: no splits")
    try:
        urls = data.get("location", {}).get("urls") or [""]
        supervised_keys = _supervised_keys(data)
    except (AttributeError, TypeError, IndexError) as error:
        raise SourceFormatError(
            f"{info_path}: its location or supervisedKeys are not what TFDS writes ({error})"
        ) from None
    return DatasetInfo(
        name=name,
        version=str(data.get("version") or folder.name),
        features=features,
        splits=splits,
        description=str(data.get("description", "")),
        homepage=str(urls[0]),
        citation=str(data.get("citation", "")),
        supervised_keys=supervised_keys,
        record_format={
            "name": TFDS_RECORDS.name,
            "file_format": fmt,
            **({"tensor_encodings": encodings} if encodings else {}),
        },
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

    Args:
        path: the TFDS directory (``<name>/<version>/`` with dataset_info.json and
            features.json).
        split: a split spec or a list of them; None for every split.
        decoders: per feature path, False for the stored bytes or a function of them.
        as_supervised: return ``(input, target)`` tuples of the dataset's supervised keys.

    Returns:
        ``{split: DataSource}``, one `DataSource` for a spec, or a list for a list of specs.

    Raises:
        DatasetNotFoundError: there is no such directory.
        SourceFormatError: its metadata or features are malformed, or of a feature class
            catalog does not read.
        NotPreparedError: a shard the metadata lists is missing.
        SplitError: the split spec is malformed or names no split.

    Examples:
        >>> ds = open_tfds("~/tensorflow_datasets/mnist/3.0.1")   # doctest: +SKIP
        >>> ds["test"][0]["image"].shape                         # doctest: +SKIP
        (28, 28, 1)
    """
    folder = Path(path).expanduser()
    info = read_tfds_info(folder)
    return open_sources(None, folder, info, split, ReadOptions(decoders, as_supervised))
