"""Preparation: downloads -> source-format reader -> features -> ArrayRecord shards.

Under the dataset's file lock: the downloads are checked, a shard plan
(`catalog.prepare.shard_plan`) cuts every split into units of about ``shard_bytes``, and the units
run (`catalog.prepare.runners`: in this process, in ``num_proc`` spawned processes, or as Apache
Beam work items, `catalog.prepare.beam`), each writing one shard into the work dir
``<version>.incomplete-<plan key>`` beside the target. The driver then verifies every shard (size,
sha256) against its unit's record, writes ``dataset_info.json`` and publishes the work dir as a
new generation (`catalog.storage.generations`: the ``<version>`` pointer moves to it last, and
readers keep the generation they opened): a crash or a second process never exposes half a
dataset. A killed prepare leaves its
finished units behind; the next prepare asking for the same plan resumes them (``overwrite=True``
starts afresh), and work dirs of other plans are removed whenever the lock is taken. A unit that
fails fails the whole prepare (the unit and the example named) and nothing is kept; an interrupt
(Ctrl-C) or a worker process that dies mid-unit (`WorkerLostError`) keeps the finished units for
the next run.
A copy that is already prepared is reused without taking the lock, so a read-only data dir
serves prepared datasets; directories are created with the permissions the umask gives.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from catalog._util.units import count, format_size
from catalog.download import CachedFile, DownloadConfig, DownloadManager, Resource
from catalog.download.checksums import write_checksums
from catalog.download.config import resolve_config
from catalog.download.local_tree import tree_files
from catalog.download.manual import changed_files, found_entry
from catalog.download.watch import Watched, check_unchanged, watch
from catalog.errors import SourceFormatError, SpecError
from catalog.formats import FORMATS, Source
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo
from catalog.prepare import beam
from catalog.prepare.needed import needed_downloads, split_downloads, without_absent
from catalog.prepare.options import DEFAULT_SHARD_BYTES, PrepareOptions
from catalog.prepare.progress import PrepareProgress
from catalog.prepare.reuse import declared_info, reusable
from catalog.prepare.runners import run_in_processes, run_serially
from catalog.prepare.shard_plan import Plan, make_plan, plan_key
from catalog.prepare.split_sources import check_class_names, split_sources
from catalog.prepare.work_unit import (
    BOOKKEEPING,
    Outcome,
    Task,
    WorkerLostError,
    finished,
    unreadable,
)
from catalog.spec.local_files import checksum_key
from catalog.spec.model import CHECKSUMS_FILE, BuilderSpec, DownloadSpec
from catalog.storage.data_dir import Location, Opened, Publisher, ShardSink, Store
from catalog.storage.diskspace import disk_usage, require_free
from catalog.storage.locking import INCOMPLETE, work_dirs
from catalog.storage.paths import DOWNLOAD_DIR_ENV, usable_dir
from catalog.storage.publishing import publishing
from catalog.storage.shards import WRITER_OPTIONS

__all__ = [
    "Prepared",
    "needed_downloads",
    "prepare_dataset",
    "register_checksums",
    "resources",
    "without_absent",
    "work_dir",
]


@dataclasses.dataclass(frozen=True)
class Prepared:
    """What `prepare_dataset` did: ``prepared`` (units written now, some perhaps kept from a
    killed run) or ``reused`` (prepared already; `waited`: by another process, while this
    one waited for the lock)."""

    info: DatasetInfo
    status: Literal["prepared", "reused"]
    waited: bool = False
    units_written: int = 0
    units_kept: int = 0


#: The folder of the download dir that preparing into a bucket writes its shards in first.
SCRATCH = "scratch"


def work_dir(target: Path, key: str) -> Path:
    """The work dir of a plan: stable, so the next prepare of the same plan resumes it."""
    return target.with_name(f"{target.name}{INCOMPLETE}{key}")


def resources(
    spec: BuilderSpec, *, register: bool = False, needed_only: bool = False
) -> dict[str, Resource]:
    """The spec's downloads as verified-download requests; each needs a registered checksum
    unless `register` (then the download registers it). `needed_only`: only those the splits
    read (`needed_downloads`)."""
    out = {}
    needed = needed_downloads(spec) if needed_only else set(spec.downloads)
    for d in spec.downloads.values():
        if d.name not in needed:
            continue
        if d.manual:  # no published checksum: measured in the manual dir
            out[d.name] = Resource(d.urls, None, None, d.filename, manual=True)
            continue
        if (d.size is None or d.sha256 is None) and not register:
            where = spec.path / CHECKSUMS_FILE if spec.path else CHECKSUMS_FILE
            raise SpecError(
                f"{where}: no size and sha256 registered for {d.url} (download {d.name!r}); "
                "add a line 'url<TAB>size<TAB>sha256<TAB>filename' for it, or let "
                f"'catalog prepare {spec.path or spec.name} --register-checksums' add it"
            )
        out[d.name] = Resource(
            d.urls,
            d.size,
            d.sha256,
            d.filename,
            d.max_extracted_size,
            in_place=d.url.startswith("file:"),
            by_hand=d.by_hand,
        )
    return out


def register_checksums(spec: BuilderSpec, files: dict[str, CachedFile]) -> BuilderSpec:
    """Merge the downloads' size and sha256 into the builder's checksums.tsv (new and changed
    entries; others are kept) and return the spec with them."""
    downloads, changed = {}, {}
    for name, d in spec.downloads.items():
        key = checksum_key(d, spec.path)
        if d.manual or (spec.path is not None and key.startswith("file:")):
            downloads[name] = d  # unpublished, or another builder's file (registered there)
            continue
        got = files[name]
        downloads[name] = dataclasses.replace(d, size=got.size, sha256=got.sha256)
        if (d.size, d.sha256) != (got.size, got.sha256):
            changed[key] = (got.size, got.sha256, d.filename)
            status = "new" if d.sha256 is None else f"changed, was {d.size} bytes {d.sha256}"
            print(f"{d.url}: {got.size} bytes, sha256 {got.sha256} ({status})", file=sys.stderr)
    if spec.path is not None and changed:
        write_checksums(spec.path / CHECKSUMS_FILE, changed)
        print(
            f"registered {count(len(changed), 'checksum')} in {spec.path / CHECKSUMS_FILE}",
            file=sys.stderr,
        )
    return spec.replace(downloads=downloads)


def prepare_dataset(
    spec: BuilderSpec,
    store: Store,
    target: Location,
    downloads: DownloadConfig,
    options: PrepareOptions | None = None,
    progress: PrepareProgress | None = None,
    opened: Opened | None = None,
) -> Prepared:
    """Prepare `spec` into `target` of the data dir `store` (a local dir, or a bucket's: the
    store's `Publisher` says how) unless it is there already; say what was done.

    `options` (see `PrepareOptions`) says whether to overwrite, how many examples per split,
    how big the shards are and who writes them. With ``downloads.register_checksums`` the files
    are fetched and their checksums registered first, even when the dataset is prepared
    already. `progress` reports the units. `opened`: the generation `target` names, when the
    caller opened it already (the first reuse check, before the lock, takes it).
    """
    options = options or PrepareOptions()
    overwrite, limit = options.overwrite, options.max_examples_per_split
    if options.image_max_side not in (None, spec.image_max_side):  # the caller picks the dir
        raise ValueError(
            f"prepare {spec.full_name} with image_max_side={options.image_max_side} into the "
            "folder of spec.with_image_max_side(...).version_dir (DatasetBuilder.prepare does)"
        )
    if options.beam_pipeline_options is not None:
        beam.check()
        beam.parse_options(options.beam_pipeline_options)  # malformed: fails before any work
    for name in {s.format for s in spec.splits.values()}:
        check = FORMATS[name].check
        if check is not None:
            check()  # a missing optional library is reported before any download
    scratch = None if downloads.download_dir is None else downloads.download_dir / SCRATCH
    dest = store.publisher(target, scratch)
    manual_dir = resolve_config(downloads).manual_dir
    assert manual_dir is not None  # resolve_config sets it
    spec = without_absent(spec, manual_dir, say=not downloads.register_checksums)
    if not overwrite and not downloads.register_checksums and not dest.leftovers():
        reused = _reusable(spec, store, target, limit, manual_dir, opened)
        if reused is not None:  # no lock needed to read a complete copy: read-only dirs work
            return Prepared(reused, "reused")  # (with work dirs to clean, the lock is taken)
    dest.check()
    if downloads.download_dir is not None:
        usable_dir(
            downloads.download_dir, "the download dir", f"--download-dir or ${DOWNLOAD_DIR_ENV}"
        )
    progress = progress or PrepareProgress(spec.full_name, downloads.progress)
    with dest.lock() as waited, DownloadManager(downloads) as manager:
        fetched = None
        if downloads.register_checksums:
            fetched = _download(spec, manager)
            spec = register_checksums(spec, fetched)
        prepared = None if overwrite else _reusable(spec, store, target, limit, manual_dir)
        if prepared is not None:
            for stale in work_dirs(dest.local):  # left by runs that were killed
                shutil.rmtree(stale, ignore_errors=True)
            return Prepared(prepared, "reused", waited)
        files = fetched or _download(spec, manager)
        # an unverified manual file's part of the resume key is its sha256, measured now:
        # finished shards are never kept for another file (even one with the same size and
        # mtime, `cp -p`)
        manual = {d.filename: files[d.name].sha256 for d in _manual(spec) if d.name in files}
        watched = watch(files)
        shard_bytes = options.shard_bytes or _resumable_size(spec, dest, limit, manual)
        key = plan_key(spec, limit, shard_bytes, WRITER_OPTIONS, manual)
        work = work_dir(dest.local, key)
        for stale in work_dirs(dest.local):  # left by runs that were killed
            if stale != work or overwrite:
                if not overwrite:
                    _say_discarded(spec, stale, shard_bytes)
                shutil.rmtree(stale, ignore_errors=True)
        options = dataclasses.replace(options, shard_bytes=shard_bytes)
        (work / BOOKKEEPING).mkdir(parents=True, exist_ok=True)
        shutil.rmtree(work / BOOKKEEPING / "partial", ignore_errors=True)
        resumable = (KeyboardInterrupt, SystemExit, WorkerLostError)
        try:
            with publishing(
                dest, key, work, shard_bytes=shard_bytes, fresh=overwrite, resumable=resumable
            ) as publication:
                try:
                    sources = split_sources(spec, files, manager, work / BOOKKEEPING / "stage")
                    for split in spec.splits.values():
                        check_class_names(spec, split, sources[split.name])
                    plan = _plan(spec, sources, work, key, options)
                except (IsADirectoryError, PermissionError) as error:  # a source, read to plan
                    raise SourceFormatError(f"{spec.full_name}: {unreadable(error)}") from None
                reads = {
                    name: tuple(
                        w for d in sorted(split_downloads(split)) for w in watched.get(d, ())
                        if not w.in_folder
                    )
                    for name, split in spec.splits.items()
                }  # fmt: skip
                shards = _run(spec, plan, sources, work, progress, options, publication.sink, reads)
                splits = {}
                for name in spec.splits:
                    held = tuple(shards[u.file] for u in plan.split_units(name))
                    splits[name] = SplitInfo(name, sum(s.num_examples for s in held), held)
                info = dataclasses.replace(
                    declared_info(spec),
                    splits=splits,
                    shard_options=plan.writer_options,
                    downloads=_downloads_found(spec, files),
                )
                # what every unit read is what was hashed (a folder's files too), or no publish
                check_unchanged((w for ws in watched.values() for w in ws), spec.full_name)
                shutil.rmtree(work / BOOKKEEPING)
                publication.publish(info)
        except resumable:
            shutil.rmtree(work / BOOKKEEPING / "partial", ignore_errors=True)
            raise  # the finished units stay for the next run to resume
        finally:
            progress.close()
        return Prepared(info, "prepared", waited, progress.written, progress.kept)


def _reusable(
    spec: BuilderSpec,
    store: Store,
    target: Location,
    limit: int | None,
    manual_dir: Path,
    opened: Opened | None = None,
) -> DatasetInfo | None:
    """`reusable`, unless an unverified manual file it was prepared from is in the manual dir
    with another size now (`catalog.download.manual`): then it is prepared again."""
    info = reusable(spec, store, target, limit, opened)
    if info is None:
        return None
    changes = changed_files(info.downloads, manual_dir, rehash=False)
    for filename, what in changes:
        print(
            f"{spec.full_name}: {filename} in the manual dir changed since it was prepared "
            f"({what}): preparing it again",
            file=sys.stderr,
        )
    return None if changes else info


def _downloads_found(spec: BuilderSpec, files: dict[str, CachedFile]) -> dict[str, dict[str, Any]]:
    """dataset_info.json's ``downloads``: as declared, each unverified manual file's size
    and sha256 as it was found, and a local folder's number of files (``files``, those its
    manifest lists, `catalog.download.local_tree`)."""
    declared = declared_info(spec).downloads
    out = {
        name: found_entry(files[name]) if d.manual and name in files else declared[name]
        for name, d in spec.downloads.items()
    }
    for name, entry in out.items():
        if name in files and files[name].path.is_dir():
            out[name] = {**entry, "files": sum(1 for _ in tree_files(files[name].path))}
    return out


def _old_plan(work: Path) -> Plan | None:
    """The plan a work dir was written by, if it can be read."""
    try:
        return Plan.from_json(json.loads((work / BOOKKEEPING / "plan.json").read_text("utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _resumable_size(
    spec: BuilderSpec, dest: Publisher, limit: int | None, manual: dict[str, Any]
) -> int:
    """The shard size of an interrupted prepare of the same spec and limit, whose finished
    shards a prepare that names no size can keep; else the default size."""
    for work in work_dirs(dest.local):
        plan = _old_plan(work)
        if plan is None or plan.shard_bytes is None:
            continue
        key = plan_key(spec, limit, plan.shard_bytes, WRITER_OPTIONS, manual)
        if plan.key == key and work == work_dir(dest.local, key):
            return plan.shard_bytes
    for key, size in dest.resumable_plans():  # a bucket's, left by a prepare on any machine
        if key == plan_key(spec, limit, size, WRITER_OPTIONS, manual):
            return size
    return DEFAULT_SHARD_BYTES


def _say_discarded(spec: BuilderSpec, work: Path, shard_bytes: int) -> None:
    """One line on stderr when the finished shards of an interrupted prepare are dropped
    because this prepare asks for something else: what is lost, why, how to keep it."""
    finished = [p for p in work.glob("*.array_record-*") if p.is_file()]
    if not finished:
        return
    size = format_size(disk_usage(work))
    old = _old_plan(work)
    if old is not None and old.shard_bytes is not None and old.shard_bytes != shard_bytes:
        why = (
            f"it cut shards at {format_size(old.shard_bytes)}, this prepare at "
            f"{format_size(shard_bytes)}; to keep them, prepare with --shard-size "
            f"{old.shard_bytes} (shard_size={old.shard_bytes})"
        )
    else:
        why = "it was asked for other settings (examples per split) or another builder version"
    print(
        f"{spec.full_name}: discarding {count(len(finished), 'finished shard')} ({size}) of an "
        f"interrupted prepare in {work}: {why}",
        file=sys.stderr,
    )


def _plan(
    spec: BuilderSpec,
    sources: dict[str, Source],
    work: Path,
    key: str,
    options: PrepareOptions,
) -> Plan:
    """The work dir's plan (a resumed prepare keeps it), or a new one, saved there."""
    path = work / BOOKKEEPING / "plan.json"
    plan = _old_plan(work)
    if plan is not None and plan.key == key:
        return plan
    assert options.shard_bytes is not None  # resolved by prepare_dataset
    plan = make_plan(
        spec,
        sources,
        key,
        limit=options.max_examples_per_split,
        shard_bytes=options.shard_bytes,
    )
    temporary = path.with_name("plan.json.partial")
    temporary.write_text(json.dumps(plan.to_json()), "utf-8")
    temporary.replace(path)
    return plan


def _run(
    spec: BuilderSpec,
    plan: Plan,
    sources: dict[str, Source],
    work: Path,
    progress: PrepareProgress,
    options: PrepareOptions,
    sink: ShardSink,
    reads: dict[str, tuple[Watched, ...]],
) -> dict[str, ShardInfo]:
    """Run the units not finished yet; every unit's verified shard, by file name. A unit is
    finished when the sink holds its shard whole (a killed run's, or a bucket's uploaded).
    Each unit checks the files its split `reads` once it has written its shard
    (`catalog.download.watch`)."""
    shards: dict[str, ShardInfo] = {}
    tasks = []
    progress.start(plan)
    stored = sink.stored({unit.file: finished(work, unit) for unit in plan.units})
    for unit in plan.units:
        done = stored.get(unit.file)
        if done is not None and done.num_examples == unit.num_examples:
            shards[unit.file] = done
            progress.unit_done(Outcome(unit, done, written=False))
            continue
        last = options.max_examples_per_split is None and unit.index == unit.count - 1
        source = sources[unit.split]
        writer = plan.writer_options
        task = Task(spec, source, unit, str(work), writer, last, sink, reads[unit.split])
        tasks.append(task)
    # The plan knows about how big the shards will be: a disk too small for them is one clear
    # error before any is written (a full disk midway is still caught by the unit). Into a
    # bucket, scratch holds only the shards being written: one per worker.
    needed = sink.scratch_bytes([task.unit.estimated_bytes for task in tasks], _workers(options))
    require_free(work, needed, f"the shards of {spec.full_name} ({len(tasks)} to write)")
    outcomes: Iterable[Outcome]
    ticked: dict[str, int] = {}
    if options.beam_pipeline_options is not None:
        outcomes = beam.run_with_beam(tasks, options.beam_pipeline_options)
    elif options.num_proc > 1 and len(tasks) > 1:
        outcomes = run_in_processes(tasks, options.num_proc)
    else:

        def tick(task: Task, n: int) -> None:
            ticked[task.unit.file] = ticked.get(task.unit.file, 0) + n
            progress.examples(task.unit, n)

        outcomes = run_serially(tasks, tick)
    failures = []
    for outcome in outcomes:
        progress.unit_done(outcome, ticked=ticked.get(outcome.unit.file, 0))
        if outcome.shard is None:
            failures.append(outcome)
        else:
            shards[outcome.unit.file] = outcome.shard
    if failures:
        min(failures, key=lambda o: plan.units.index(o.unit)).raise_error()
    for task in tasks:  # the driver checks what the workers wrote (a bucket's: on publish)
        shard = shards.get(task.unit.file)
        problem = "it was not written" if shard is None else sink.check(shard)
        if problem is not None:
            raise SourceFormatError(f"{task.unit.describe()}: {problem}")
    return shards


def _workers(options: PrepareOptions) -> int:
    """How many units are written at once on this machine."""
    if options.beam_pipeline_options is not None:
        given = beam.parse_options(options.beam_pipeline_options).get("direct_num_workers", "1")
        return int(given) if given.isdigit() and int(given) > 0 else 1
    return options.num_proc


def _manual(spec: BuilderSpec) -> list[DownloadSpec]:
    return [d for d in spec.downloads.values() if d.manual]


def _download(spec: BuilderSpec, manager: DownloadManager) -> dict[str, CachedFile]:
    """The files to prepare from: only what the splits read, except when registering
    checksums, which records every declared download."""
    register = manager.config.register_checksums
    return manager.download_all(resources(spec, register=register, needed_only=not register))
