"""Running one work unit of a shard plan: its examples -> one ArrayRecord file, and a record.

A unit writes ``<work>/.work/partial/<file>.<random>``, hashes it and renames it to
``<work>/<file>`` when complete (preparing into a bucket: uploads it into the generation with
its hash and count, then removes it), then writes its record ``<work>/.work/units/<file>.json``
(count, bytes, sha256), itself renamed into place: a unit with a record (in a bucket: an object
with that metadata) is finished, anything else is redone.
`run_unit` never raises: whatever goes wrong comes back as an `Outcome` naming the unit (and,
for a bad example, the example), so it crosses process and Beam worker boundaries intact;
`Outcome.raise_error` raises it again as the same kind of catalog error in the driver.
"""

from __future__ import annotations

import errno
import json
import shutil
import signal
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from catalog import errors
from catalog._util.hashing import Digest
from catalog._util.units import format_size
from catalog.download.watch import Watched, check_unchanged
from catalog.errors import CatalogError, FeatureError, SourceFormatError, StorageError
from catalog.features.batch_encode import BatchEncoder, PackedRecords
from catalog.features.codec import RecordCodec
from catalog.formats import FORMATS, Source
from catalog.formats.base import RandomAccess
from catalog.info.dataset_info import ShardInfo
from catalog.prepare.shard_plan import Unit, open_reader
from catalog.spec.model import BuilderSpec
from catalog.storage.data_dir import ShardSink
from catalog.storage.local_store import LocalSink
from catalog.storage.shard_writer import open_shard_writer

__all__ = [
    "BOOKKEEPING",
    "Outcome",
    "Task",
    "WorkerLostError",
    "finished",
    "finished_task",
    "lost_worker",
    "run_unit",
    "unreadable",
]

#: The work dir's folder of plan, unit records, partial shards and staged sources; removed
#: before the work dir becomes the prepared dataset.
BOOKKEEPING = ".work"


class WorkerLostError(CatalogError, RuntimeError):
    """A worker process died while it ran a unit (killed by a signal: the OS's out-of-memory
    killer, say). Nothing was wrong with the unit: the units finished so far are kept, and
    the same prepare run again resumes them."""


def lost_worker(unit: Unit | None, who: str, exitcode: int | None) -> WorkerLostError:
    """The error for `who` (a worker process, named) dying with `exitcode` (a negative
    number for a signal, as `multiprocessing` gives it) while it ran `unit`."""
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by signal {signal.Signals(-exitcode).name} ({-exitcode})"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
        if -exitcode == signal.SIGKILL:
            how += " (as the OS's out-of-memory killer does)"
    elif exitcode is None:
        how = "died (its exit status is unknown)"
    else:
        how = f"exited with code {exitcode}"
    doing = f"while it was writing {unit.describe()}" if unit is not None else "between units"
    return WorkerLostError(
        f"{who} {how} {doing}; the units finished so far are kept: run the same prepare "
        "again to resume (with fewer workers if memory ran out)"
    )


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to run one unit (picklable: sent to processes and Beam)."""

    spec: BuilderSpec
    source: Source
    unit: Unit
    work: str
    writer_options: str
    #: The split's last unit of a full prepare: the source must hold no example after it.
    last: bool = False
    #: Where the finished shard goes (the data dir's `ShardSink`): the work dir itself, or a
    #: bucket's generation (then the work dir only holds the shard while it is written, and
    #: the unit's record). None: the work dir.
    sink: ShardSink | None = None
    #: The source files the split reads, as they were hashed: checked unchanged once the
    #: shard is written, before it counts as finished (`catalog.download.watch`).
    reads: tuple[Watched, ...] = ()

    @property
    def shards(self) -> ShardSink:
        return self.sink if self.sink is not None else LocalSink(self.work)


@dataclass(frozen=True)
class Outcome:
    """What running a unit gave: its shard, or the error (kind and message)."""

    unit: Unit
    shard: ShardInfo | None = None
    error_kind: str = ""
    error: str = ""
    written: bool = True  # False: it was finished already

    def raise_error(self) -> None:
        if self.shard is not None:
            return
        kind = getattr(errors, self.error_kind, None)
        if kind is FeatureError:
            raise FeatureError(self.error)
        if isinstance(kind, type) and issubclass(kind, CatalogError):
            raise kind(self.error)
        raise SourceFormatError(self.error)


def _record_path(work: Path, file: str) -> Path:
    return work / BOOKKEEPING / "units" / f"{file}.json"


def finished(work: Path, unit: Unit) -> ShardInfo | None:
    """The record of `unit` if it was finished (by this run or a killed one), else None."""
    path = _record_path(work, unit.file)
    try:
        data = json.loads(path.read_text("utf-8"))
        shard = ShardInfo(**data["shard"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("unit") != asdict(unit):
        return None
    return shard


def finished_task(task: Task) -> ShardInfo | None:
    """`finished`, asked where the shard ends up (its sink): for a bucket, of the object
    uploaded, so that a driver sees what workers on other machines wrote."""
    shard = task.shards.finished(task.unit.file, finished(Path(task.work), task.unit))
    return shard if shard is not None and shard.num_examples == task.unit.num_examples else None


def unreadable(error: OSError) -> str:
    """What an OSError reading a source file says, in a user's words: a directory where a
    file belongs is named as such, never as a raw ``[Errno 21]``."""
    if isinstance(error, IsADirectoryError):
        return (
            f"{error.filename} is a directory where a file belongs; place the file itself "
            "there (not a folder holding it, nor its extracted contents)"
        )
    if error.filename is not None and error.strerror:
        return f"{error.filename}: cannot be read ({error.strerror})"
    return str(error)


def _write_error(path: Path, unit: Unit, error: BaseException) -> StorageError:
    free = shutil.disk_usage(path.parent).free if path.parent.exists() else 0
    reason = getattr(error, "strerror", None) or str(error)
    return StorageError(
        f"cannot write {path}: {reason}; this shard needs about "
        f"{format_size(unit.estimated_bytes)} ({unit.describe()}) and {format_size(free)} is "
        f"free there; free some space (or raise the file size limit) or use another --data-dir, "
        "then prepare again"
    )


_TICK = 1000  # examples between progress ticks


def _write(task: Task, path: Path, tick: Callable[[int], None] | None) -> tuple[int, Digest | None]:
    """Write the unit's shard at `path`: its number of examples, and the file's digest where
    the writer took it as it wrote (else None: hash the file)."""
    spec, unit = task.spec, task.unit
    split = spec.splits[unit.split]
    encode = RecordCodec(spec.features).encode
    reader = open_reader(split, task.source)
    count = 0
    try:
        try:
            writer = open_shard_writer(path, task.writer_options)
        except (RuntimeError, ValueError, OSError) as error:
            raise _write_error(path, unit, error) from None
        # the last unit of a source of unknown length reads one example past its range: if
        # there is one, the spec's count is wrong (read in the same pass: a sequential
        # source would otherwise be read from its start a second time)
        check_more = task.last and reader.length is None
        stop = unit.stop + (1 if check_more else 0)
        try:
            for key, item in _records(task, reader, stop):
                packed = item if isinstance(item, PackedRecords) else None
                if count + (1 if packed is None else len(packed)) > unit.num_examples:
                    where = spec.path / "builder.yaml" if spec.path else "the builder spec"
                    raise SourceFormatError(
                        f"split {unit.split!r} of {spec.full_name}: the source files hold more "
                        f"than {unit.stop} examples but {where} (splits.{unit.split}."
                        f"num_examples) expects {split.num_examples}"
                    )
                if not isinstance(item, PackedRecords):
                    position = unit.start + count
                    try:
                        record = encode(item)
                    except FeatureError as error:
                        raise FeatureError(
                            error.reason,
                            feature_path=error.feature_path,
                            example=f"split {unit.split!r}, example {position} (key {key!r}) "
                            f"in {unit.describe()}",
                        ) from None
                try:
                    if packed is None:
                        writer.write(record)
                    else:  # a batch's records in one call, no bytes object per record
                        writer.write_packed(packed.data, packed.starts)
                except (RuntimeError, ValueError, OSError) as error:
                    raise _write_error(path, unit, error) from None
                before, count = count, count + (1 if packed is None else len(packed))
                if tick is not None and count // _TICK > before // _TICK:
                    tick((count // _TICK - before // _TICK) * _TICK)
        finally:
            try:
                writer.close()
            except (RuntimeError, ValueError, OSError) as error:
                raise _write_error(path, unit, error) from None
    finally:
        reader.close()
    return count, writer.digest


def _records(
    task: Task, reader: RandomAccess, stop: int
) -> Iterator[tuple[str, dict[str, Any] | PackedRecords]]:
    """``(key, example)`` for each example ``unit.start..stop-1`` to encode, or
    ``("", records)`` for a batch the format checked column by column and `BatchEncoder`
    encoded (the same bytes)."""
    unit, features = task.unit, task.spec.features
    fmt = FORMATS[task.spec.splits[unit.split].format]
    if fmt.batches is None or not BatchEncoder.supports(features):
        for key, example in reader.examples(unit.start, stop):
            yield key, example
        return
    encoder = BatchEncoder(features)
    for batch in fmt.batches(task.source, unit.start, stop):
        if batch.columns is not None:
            yield "", encoder.encode_packed(batch.columns, batch.rows)
        else:
            for key, example in batch.examples or ():
                yield key, example
            if batch.error is not None:
                raise batch.error


def run_unit(task: Task, tick: Callable[[int], None] | None = None) -> Outcome:
    """Write the unit's shard and its record (see the module docstring); never raises.

    A unit finished already (a retried Beam work item) is not written again. `tick(n)` is
    called every 1000 examples written (progress within a unit).
    """
    unit, work = task.unit, Path(task.work)
    try:
        done = finished_task(task)  # by a killed run, or a retried work item
        if done is not None:
            return Outcome(unit, done, written=False)
    except CatalogError as error:
        return Outcome(unit, error_kind=type(error).__name__, error=f"{unit.describe()}: {error}")
    # a worker on another machine than the driver (a Beam cluster uploading into a bucket)
    # has no work dir: it writes the shard in its own temp dir and keeps no record
    elsewhere = not work.is_dir()
    scratch = Path(tempfile.gettempdir()) / "catalog-shards" if elsewhere else work / BOOKKEEPING
    partial = scratch / "partial" / f"{unit.file}.{uuid.uuid4().hex[:8]}"
    try:
        partial.parent.mkdir(parents=True, exist_ok=True)
        count, written = _write(task, partial, tick)
        if count != unit.num_examples:
            where = task.spec.path / "builder.yaml" if task.spec.path else "the builder spec"
            raise SourceFormatError(
                f"split {unit.split!r} of {task.spec.full_name}: the source files hold "
                f"{unit.start + count} examples but {where} (splits.{unit.split}.num_examples) "
                f"expects {task.spec.splits[unit.split].num_examples} ({unit.describe()})"
            )
        check_unchanged(task.reads, unit.describe())  # what was read is what was hashed
        digest = written or Digest.of_file(partial)  # hashed as written, or read again
        shard = ShardInfo(unit.file, count, digest.size, digest.sha256)
        task.shards.put(partial, shard, digest.stamp)  # the stamp spares the sink a re-hash
        if elsewhere:
            return Outcome(unit, shard)
        record = _record_path(work, unit.file)
        record.parent.mkdir(parents=True, exist_ok=True)
        temporary = record.with_name(f"{record.name}.{uuid.uuid4().hex[:8]}")
        temporary.write_text(json.dumps({"unit": asdict(unit), "shard": asdict(shard)}), "utf-8")
        temporary.replace(record)
        return Outcome(unit, shard)
    except CatalogError as error:
        message = str(error)
        if unit.file not in message:  # name the unit (a FeatureError names it already)
            message = f"{unit.describe()}: {message}"
        return Outcome(unit, error_kind=type(error).__name__, error=message)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return Outcome(
                unit, error_kind="StorageError", error=str(_write_error(partial, unit, error))
            )
        return Outcome(
            unit, error_kind="SourceFormatError", error=f"{unit.describe()}: {unreadable(error)}"
        )
    finally:
        partial.unlink(missing_ok=True)
