"""Check a prepared dataset against its dataset_info.json: is every shard still what was written?

For each shard ``dataset_info.json`` lists, in this order, the first failing check is a
:class:`Problem` (one per shard at most):

- ``missing``: the file is not there;
- ``size``: its size is not the recorded ``num_bytes``;
- ``sha256``: its sha256 is not the recorded one (a flipped byte, a file replaced);
- ``records``: array_record's reader cannot open it, counts other than ``num_examples``
  records in it, or (features all fixed-size) a record's size is not what the features
  encode to: dataset_info.json no longer describes the data.

``source`` problems (found by `catalog.api.verify`, which knows the manual dir) name an unverified
manual file the dataset was prepared from that is in the manual dir with other bytes now
(`catalog.download.manual`): the prepared copy no longer matches its source.

``info`` problems concern dataset_info.json itself: unreadable, a split with no shards, or a
split count that is not the sum of its shards'. Nothing is repaired: preparing the dataset again
(``catalog prepare NAME --overwrite``) is the fix.

>>> b = catalog.builder("fashion_mnist")  # doctest: +SKIP
>>> problems = verify(b.store, b.data_path)  # doctest: +SKIP
>>> print(*problems, sep="\\n")                                    # doctest: +SKIP
fashion_mnist-test.array_record-00000-of-00001: sha256 is 3f0a..., dataset_info.json says 9c1e...
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from array_record.python.array_record_module import ArrayRecordReader

from catalog._util.hashing import sha256_file
from catalog.errors import CatalogError
from catalog.features.codec import RecordCodec
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo
from catalog.read.array_record import open_reader
from catalog.storage.data_dir import Location, Opened, Store
from catalog.storage.shards import is_compressed

__all__ = ["Problem", "ProblemKind", "verify", "verify_shard"]

ProblemKind = Literal["info", "missing", "size", "sha256", "records", "source"]


@dataclass(frozen=True)
class Problem:
    """What is wrong with one file of a prepared dataset."""

    kind: ProblemKind
    file: str  # a shard's file name, or dataset_info.json
    message: str  # what was expected and what was found

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def verify(store: Store, target: Location, opened: Opened | None = None) -> list[Problem]:
    """Every problem of the dataset prepared in `target` of the data dir `store` (empty when it
    is intact); `opened`: its generation, when the caller opened it already.

    Reads every shard once (sha256) and opens each with array_record's reader (record count).
    The data dir's store (`catalog.storage.data_dir.Store`) opens the generation once (a
    local ``<version>`` pointer resolved and the generation it names held while it is
    checked) and hands over each shard as a local file (a bucket's fetched into a temporary
    file, one at a time: bounded disk).
    """
    shown = target  # what problems name; the files read are the generation's
    try:
        opened = opened if opened is not None else store.open(shown)
    except OSError as exc:
        return [Problem("info", INFO_FILE, f"cannot read {shown / INFO_FILE}: {exc.strerror}")]
    except CatalogError as exc:
        return [Problem("info", INFO_FILE, str(exc))]
    except Exception as exc:  # malformed in a way DatasetInfo.read does not name: report it
        reason = f"{type(exc).__name__}: {exc}"
        return [Problem("info", INFO_FILE, f"{shown / INFO_FILE} is unreadable ({reason})")]
    if opened is None:
        missing = os.strerror(errno.ENOENT)
        return [Problem("info", INFO_FILE, f"cannot read {shown / INFO_FILE}: {missing}")]
    info = opened.info
    problems = _check_info(info)
    for shard, path in store.shard_files(opened):
        if path is None:
            problems.append(Problem("missing", shard.file, f"missing from {shown}"))
        elif problem := verify_shard(path.parent, shard, **_shard_options(info), shown=shown):
            problems.append(problem)
    return problems


def _shard_options(info: DatasetInfo) -> dict[str, Any]:
    compressed = is_compressed(info.shard_options)
    return {"compressed": compressed, "record_size": RecordCodec(info.features).record_size}


def _check_info(info: DatasetInfo) -> list[Problem]:
    """The problems of dataset_info.json's split list itself."""
    problems = []
    for split in info.splits.values():
        if not split.shards:
            problems.append(Problem("info", INFO_FILE, f"split {split.name!r} lists no shards"))
        elif split.num_examples != sum(s.num_examples for s in split.shards):
            held = sum(s.num_examples for s in split.shards)
            problems.append(
                Problem(
                    "info",
                    INFO_FILE,
                    f"split {split.name!r} says {split.num_examples} examples but its shards "
                    f"hold {held}",
                )
            )
    return problems


def verify_shard(
    folder: Path,
    shard: ShardInfo,
    *,
    compressed: bool = False,
    record_size: int | None = None,
    shown: Location | None = None,
) -> Problem | None:
    """The first problem of one shard in `folder` (see the module docstring), or None.

    `compressed`: whether the shard was written with compressed chunks (older copies);
    `record_size`: the size of every record when the features are all fixed-size (each record
    is read and checked: a description that does not fit the data is found); `shown`: the
    folder to name in the problem (default `folder`)."""
    path = folder / shard.file
    if not path.is_file():
        return Problem("missing", shard.file, f"missing from {shown or folder}")
    size = path.stat().st_size
    if size != shard.num_bytes:
        return Problem("size", shard.file, f"is {size} bytes, {INFO_FILE} says {shard.num_bytes}")
    sha256 = sha256_file(path)
    if sha256 != shard.sha256:
        return Problem("sha256", shard.file, f"sha256 is {sha256}, {INFO_FILE} says {shard.sha256}")
    try:
        reader = open_reader(str(path), compressed=compressed)
        try:
            count = int(reader.num_records())
            bad = _odd_record(reader, count, record_size) if record_size else None
        finally:
            reader.close()
    except CatalogError as exc:
        return Problem("records", shard.file, f"array_record cannot read it: {exc}")
    except (RuntimeError, ValueError, IndexError) as exc:
        return Problem("records", shard.file, f"array_record cannot read its records: {exc}")
    if bad is not None:
        index, size = bad
        return Problem(
            "records",
            shard.file,
            f"record {index} has {size} bytes, but the features in {INFO_FILE} encode to "
            f"{record_size}",
        )
    if count != shard.num_examples:
        return Problem(
            "records", shard.file, f"holds {count} records, {INFO_FILE} says {shard.num_examples}"
        )
    return None


def _odd_record(
    reader: ArrayRecordReader, count: int, size: int, chunk: int = 4096
) -> tuple[int, int] | None:
    """(index, size) of the first record whose size is not `size`, or None."""
    for start in range(0, count, chunk):
        for offset, record in enumerate(reader.read(start, min(count, start + chunk))):
            if len(record) != size:
                return start + offset, len(record)
    return None
