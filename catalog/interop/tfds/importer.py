"""`import_tfds`: copy a TFDS-prepared directory into a catalog dataset in the data dir.

The result is catalog's own layout (ArrayRecord shards of catalog records, dataset_info.json),
with the features mapped from features.json, read with `catalog.data_source(path)` at catalog's
random-access speed. PNG/JPEG images are carried over byte for byte (never re-encoded). It is
published like a prepared dataset, through the data dir's store (a local work dir renamed
into a generation, or shards uploaded into a bucket's and a pointer written last), under the
dataset's lock; the TFDS directory is only read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path

from array_record.python.array_record_module import ArrayRecordWriter

from catalog._util.hashing import sha256_file
from catalog.errors import FeatureError, SourceFormatError, SpecError
from catalog.features.codec import RECORD_FORMAT, RecordCodec
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
from catalog.interop.tfds.codec import image_paths
from catalog.interop.tfds.directory import read_tfds_info
from catalog.read.data_source import DataSource
from catalog.storage import paths
from catalog.storage.data_dir import Location, Store
from catalog.storage.locking import INCOMPLETE, make_dir, work_dirs
from catalog.storage.publishing import publishing
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
    store: Store,
    *,
    name: str | None = None,
    overwrite: bool = False,
    download_dir: str | os.PathLike[str] | None = None,
) -> tuple[DatasetInfo, Location]:
    """Import the TFDS directory `source` into ``<data dir>/<name>[/<config>]/<version>`` of
    the data dir `store`, local or a bucket (published through `catalog.storage.publishing`).

    Returns the new dataset's info and where it is. An existing dataset there is kept
    (SpecError saying so) unless `overwrite`.
    """
    folder = Path(source).expanduser()
    tfds_info = read_tfds_info(folder)
    name = name or tfds_info.name
    full_name = f"{name}/{tfds_info.config}" if tfds_info.config else name
    target = store.target(full_name, tfds_info.version)
    scratch = paths.download_dir(download_dir, store.root) / "scratch"
    dest = store.publisher(target, scratch)
    dest.check()
    key = "import-" + hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    with dest.lock():
        if not overwrite and store.open(target) is not None:
            raise SpecError(
                f"{target} holds a dataset already; pass --overwrite to replace it, or --name "
                "to import under another name"
            )
        for stale in work_dirs(dest.local):
            shutil.rmtree(stale, ignore_errors=True)
        dest.local.parent.mkdir(parents=True, exist_ok=True)
        work = make_dir(dest.local.parent, f"{dest.local.name}{INCOMPLETE}")
        with publishing(dest, key, work) as publication:
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
                publication.sink.put(path, shard)
                splits[split] = SplitInfo(split, len(ds), (shard,))
            info = dataclasses.replace(
                tfds_info,
                name=name,
                splits=splits,
                record_format=dict(RECORD_FORMAT),
                shard_options=WRITER_OPTIONS,
            )
            publication.publish(info)
    return info, target
