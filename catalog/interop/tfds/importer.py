"""`import_tfds`: copy a TFDS-prepared directory into a catalog dataset in the data dir.

The result is catalog's own layout (ArrayRecord shards of catalog records, dataset_info.json),
with the features mapped from features.json, read with `catalog.data_source(path)` at catalog's
random-access speed. PNG/JPEG images are carried over byte for byte (never re-encoded). It is
written like a prepared dataset: into a temporary folder beside the target, moved into place
whole, under the dataset's lock; the TFDS directory is only read.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

from array_record.python.array_record_module import ArrayRecordWriter

from catalog._util.hashing import sha256_file
from catalog.errors import FeatureError, SourceFormatError, SpecError
from catalog.features.codec import RECORD_FORMAT, RecordCodec
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo, SplitInfo
from catalog.interop.tfds.codec import image_paths
from catalog.interop.tfds.directory import read_tfds_info
from catalog.read.data_source import DataSource
from catalog.storage import paths
from catalog.storage.generations import publish
from catalog.storage.locking import INCOMPLETE, dataset_lock, work_dirs
from catalog.storage.shards import WRITER_OPTIONS, shard_name

__all__ = ["image_paths", "import_tfds"]


def _where(folder: Path, split: SplitInfo, index: int) -> str:
    """``<shard path>: record <i>``: where example `index` of `split` is stored."""
    for shard in split.shards:
        if index < shard.num_examples:
            return f"{folder / shard.file}: record {index}"
        index -= shard.num_examples
    return f"{folder}: example {index}"  # pragma: no cover (past the split: never read)


def import_tfds(
    source: str | Path,
    *,
    data_dir: str | Path | None = None,
    name: str | None = None,
    overwrite: bool = False,
) -> tuple[DatasetInfo, Path]:
    """Import the TFDS directory `source` into ``<data dir>/<name>[/<config>]/<version>``.

    Returns the new dataset's info and folder. An existing dataset there is kept (SpecError
    saying so) unless `overwrite`.
    """
    folder = Path(source).expanduser()
    tfds_info = read_tfds_info(folder)
    name = name or tfds_info.name
    target = paths.data_dir(data_dir) / name
    if tfds_info.config:
        target /= tfds_info.config
    target /= tfds_info.version
    target.parent.mkdir(parents=True, exist_ok=True)
    with dataset_lock(target):
        if (target / INFO_FILE).is_file() and not overwrite:
            raise SpecError(
                f"{target} holds a dataset already; pass --overwrite to replace it, or --name "
                "to import under another name"
            )
        for stale in work_dirs(target):
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"{target.name}{INCOMPLETE}", dir=target.parent))
        try:
            skip = dict.fromkeys(image_paths(tfds_info.features), False)
            encode = RecordCodec(tfds_info.features).encode
            splits = {}
            for split in tfds_info.splits:
                ds = DataSource(folder, tfds_info, split, decoders=skip)  # type: ignore[arg-type]
                path = work / shard_name(name, split)
                writer = ArrayRecordWriter(str(path), WRITER_OPTIONS)
                try:
                    for index, example in enumerate(ds):
                        try:
                            record = encode(example)
                        except FeatureError as error:
                            raise SourceFormatError(
                                f"{_where(folder, tfds_info.splits[split], index)} (split "
                                f"{split!r}) cannot be imported: {error}"
                            ) from None
                        writer.write(record)
                finally:
                    writer.close()
                shard = ShardInfo(path.name, len(ds), path.stat().st_size, sha256_file(path))
                splits[split] = SplitInfo(split, len(ds), (shard,))
            info = dataclasses.replace(
                tfds_info, name=name, splits=splits, record_format=dict(RECORD_FORMAT)
            )
            info.write(work)
            publish(work, target)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return info, target
