"""`catalog prepare NAME...`: download, verify and prepare datasets, for people and CI.

A NAME may also be a PATH of local files (`catalog.spec.infer`: image or WAV/FLAC folders,
CSV/TSV, JSON Lines, Parquet, WebDataset shards), prepared with no builder.yaml as ``--name``
(default: from the path); a registered name or a builder folder wins over a path of the same
name (``./mnist`` is the folder).

One line per dataset on stdout (or, with ``--json``, one JSON document and nothing else);
progress and notes go to stderr: byte bars only when stdout and stderr are terminals, one
line per file otherwise, nothing with ``--quiet``. A dataset that fails is one error line on
stderr (a failed download: which files, how many sources were tried, the most telling reason
and what to do; ``--verbose`` prints every source tried). Exit 0 when every dataset is
prepared, 1 when one failed (the others still run), 2 on a usage error (before any work).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog._util.units import format_size, parse_size
from catalog.api.builder import DatasetBuilder
from catalog.api.resolve import TFDS_PREFIX, DatasetHandle, Resolver
from catalog.cli import local_files
from catalog.cli.common import (
    DATASETS,
    DOWNLOAD_DIR,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    Argument,
    Arguments,
    dataset_label,
    dataset_name,
    error,
    error_text,
    exit_code,
    positive_int,
)
from catalog.download.report import summary
from catalog.errors import CatalogError
from catalog.features.image import DOWNSCALE_QUALITY
from catalog.prepare.options import PrepareOptions
from catalog.prepare.reuse import serves
from catalog.storage import paths

if TYPE_CHECKING:
    from catalog.download import DownloadConfig, ProgressMode
    from catalog.storage.data_dir import Opened

__all__ = ["ARGUMENTS", "run"]


class UsageError(Exception):
    """A flag given where it does not apply."""


_JSON_HELP = """\
--json prints one document: {"ok": bool, "datasets": [{"name", "config" (null without
configs), "version", "status": "prepared" | "reused" | "failed", "path",
"max_examples_per_split" (as given, or null), "image_max_side" (null at full size),
"units_written", "units_kept" (shards
written now, and kept from a killed run), "splits": {SPLIT: {"num_examples",
"num_bytes", "shards": [{"file", "num_examples", "num_bytes", "sha256"}]}} (empty when
failed), "num_bytes", "seconds", "error" (null, or the message)}, ...]}; "ok" is true when
every dataset is prepared or reused."""

#: Appended to a download error's one-line summary.
_MORE = "--verbose lists every source tried"


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


ARGUMENTS = Arguments(
    description="Download, verify and prepare datasets into ArrayRecord files, one line "
    "per dataset. A prepared dataset is reused at once. Exit status: 0 all prepared, 1 at "
    "least one failed (the others still run), 2 usage error. A PATH of local files "
    "(a folder of images or audio, CSV/TSV/JSON Lines/Parquet files, WebDataset shards) is "
    "prepared with no builder.yaml: see the options for local files below. NAME may also "
    "be a Croissant file (a path or an http(s) URL ending in .json/.jsonld): its files are "
    "downloaded and checked (sha256) and its record sets prepared as splits.\n\n" + _JSON_HELP,
    example="catalog prepare fashion_mnist mnist --data-dir ~/datasets --json",
    arguments=(
        *DATASETS,
        DOWNLOAD_DIR,
        Argument(
            "--manual-dir",
            help="files placed by hand, by original file name (<download dir>/manual)",
        ),
        Argument(
            "--mirror",
            action="append",
            metavar="URL_OR_DIR",
            help="a mirror tried before the files' own URLs, holding <mirror>/<host>/<path of the "
            f"URL>; repeat for more (${paths.MIRRORS_ENV})",
        ),
        Argument(
            "--offline",
            action="store_true",
            help=f"never use the network: only the cache, mirror dirs, the manual dir "
            f"(${paths.OFFLINE_ENV}=1)",
        ),
        Argument("--overwrite", action="store_true", help="prepare again even if prepared"),
        Argument(
            "--max-examples-per-split",
            type=positive_int,
            metavar="N",
            help="stop each split after N examples (a quick copy for smoke tests); a full copy "
            "is reused as it is, and preparing again without N prepares everything",
        ),
        Argument(
            "--num-proc",
            type=positive_int,
            default=1,
            metavar="N",
            help="write the shards in N processes (the bytes are the same as with 1)",
        ),
        Argument(
            "--beam-pipeline-options",
            metavar="OPTIONS",
            help="write the shards as Apache Beam work items, e.g. "
            "'runner=DirectRunner,direct_num_workers=2' (pip install 'catalog[beam]'; see the "
            "README for other runners)",
        ),
        Argument(
            "--shard-size",
            type=_size,
            metavar="SIZE",
            help="cut shards at about SIZE bytes (e.g. 256MB; default 1GiB, or the size an "
            "interrupted prepare of the dataset was cutting them at, to keep its finished shards)",
        ),
        Argument(
            "--image-max-side",
            type=positive_int,
            metavar="N",
            help=f"store every image at most N pixels on its longer side (aspect kept; smaller "
            f"images untouched), as JPEG quality {DOWNSCALE_QUALITY}: a copy of its own, in "
            "<version>-maxN beside the full-size one; read it with --image-max-side N",
        ),
        Argument(
            "--register-checksums",
            action="store_true",
            help="for builder authors: record new or changed downloads in the builder's "
            "checksums.tsv",
        ),
        Argument(
            "--json", action="store_true", help="print one JSON document on stdout (see above)"
        ),
        Argument(
            "-q", "--quiet", action="store_true", help="no progress on stderr (errors still show)"
        ),
        Argument(
            "--verbose",
            action="store_true",
            help="a failed download's full report on stderr: every source tried and why it "
            "failed (by default one line with the most telling reason)",
        ),
        local_files.GROUP,
    ),
)


def _progress(args: argparse.Namespace) -> ProgressMode:
    """Byte bars only for a person at a terminal; lines for logs and scripts."""
    if args.quiet:
        return "none"
    if not args.json and sys.stdout.isatty() and sys.stderr.isatty():
        return "bars"
    return "lines"


def _prepare_one(
    b: DatasetBuilder, args: argparse.Namespace, config: DownloadConfig, opened: Opened | None
) -> dict[str, Any]:
    """Prepare one dataset (`opened`: its generation, as `_check_dirs` found it); its entry of
    the --json document (its line is printed here)."""
    limit = args.max_examples_per_split
    label = dataset_label(b)
    entry: dict[str, Any] = {
        "name": b.name,
        "config": b.config,
        "version": b.version,
        "status": "failed",
        "path": str(b.data_path),
        "max_examples_per_split": limit,
        "image_max_side": b.image_max_side,
        "units_written": 0,
        "units_kept": 0,
        "splits": {},
        "num_bytes": 0,
        "seconds": 0.0,
        "error": None,
    }
    start = time.perf_counter()
    try:
        options = PrepareOptions(
            overwrite=args.overwrite,
            max_examples_per_split=limit,
            num_proc=args.num_proc,
            beam_pipeline_options=args.beam_pipeline_options,
            shard_bytes=args.shard_size,  # None: 1 GiB, or an interrupted prepare's size
        )
        done = b.prepare(
            options, download_config=config, download_dir=args.download_dir, opened=opened
        )
    except (CatalogError, OSError) as exc:
        text = error_text(exc)
        entry.update(seconds=round(time.perf_counter() - start, 3), error=text)
        _codes[id(entry)] = exit_code(exc)
        short = None if args.verbose else summary(exc)
        error(f"{dataset_name(b)}: {text if short is None else f'{short}; {_MORE}'}")
        return entry
    seconds = time.perf_counter() - start
    info = done.info
    num_bytes = sum(s.num_bytes for s in info.splits.values())
    entry.update(
        status=done.status,
        units_written=done.units_written,
        units_kept=done.units_kept,
        splits=info.to_json()["splits"],
        num_bytes=num_bytes,
        seconds=round(seconds, 3),
    )
    if not args.json:
        if done.status == "reused":
            status = "reused (prepared by another process)" if done.waited else "reused"
        else:
            status = f"prepared in {seconds:.1f} s"
            if done.units_kept:
                status += f" ({done.units_kept} shards kept from an earlier run)"
        full = {n: s.num_examples for n, s in b.spec.splits.items()}
        if limit is not None and {n: s.num_examples for n, s in info.splits.items()} != full:
            status += f" (at most {limit} examples per split)"
        splits = ", ".join(f"{n} {s.num_examples}" for n, s in info.splits.items())
        print(f"{label}: {status}: {splits} examples, {format_size(num_bytes)} -> {b.data_path}")
    return entry


def _check_dirs(
    builders: list[DatasetBuilder], args: argparse.Namespace, config: DownloadConfig
) -> list[Opened | None]:
    """The data and download dirs must be usable where something is to be prepared (a read-only
    data dir is fine for datasets that are only reused); each builder's generation as found
    (opened once: the prepare's first reuse check takes it)."""
    from catalog.download import resolve_config

    found: list[Opened | None] = []

    def to_prepare(b: DatasetBuilder) -> bool:
        if args.overwrite or config.register_checksums:
            found.append(None)
            return True
        try:
            opened = b.open()
        except CatalogError:  # unreachable, no bucket, no credentials: the writer's check says
            b.store.check_writable(b.data_path)  # so with how to fix it
            raise
        limit = args.max_examples_per_split
        served = None if opened is None else serves(b.store, opened, b.spec, b.data_path, limit)
        reused = served is not None
        # only a copy that is reused is kept open: one prepared again is not held meanwhile
        found.append(opened if reused else None)
        return not reused

    todo = [b for b in builders if to_prepare(b)]
    for b in todo:  # reachable, writable: one clear error if not
        b.store.check_writable(b.data_path)
    if todo:
        resolved = resolve_config(config, data_dir=todo[0].data_dir, download_dir=args.download_dir)
        assert resolved.download_dir is not None
        paths.usable_dir(
            resolved.download_dir,
            "the download dir",
            f"--download-dir or ${paths.DOWNLOAD_DIR_ENV}",
        )
    return found


def _handle(name: str, resolver: Resolver) -> DatasetHandle:
    """What NAME or PATH names (`catalog.api.resolve`: a path is a path first, what was
    chosen when it also reads as ``builder-folder/CONFIG`` is a note on stderr)."""
    return resolver.resolve(
        name, files=True, note=lambda chosen: print(f"catalog: {chosen}", file=sys.stderr)
    )


def _builders(args: argparse.Namespace) -> list[tuple[DatasetHandle, DatasetBuilder | None]]:
    """What each NAME or PATH names (`catalog.api.resolve`) with its builder (None for a
    Croissant file or a ``tfds:`` name not prepared, made once the download settings are
    known, in the data dir the handle resolved); the --write-spec folder written."""
    from catalog.api.files import files_builder
    from catalog.spec.infer import is_path
    from catalog.spec.infer.write import write_spec

    resolver = Resolver(args.data_dir, args.image_max_side)
    handles = [_handle(name, resolver) for name in args.names]
    is_files = [h.kind == "files" for h in handles]
    joined = local_files.joined_paths(args.names, is_files, args.name)
    if joined != args.names:  # several PATHs, one dataset: the glob naming them (run reads it)
        args.names = joined
        handles = [
            DatasetHandle("files", joined[0], handles[0].store, Path(joined[0]).expanduser())
        ]
    given = [
        f for f in ("name", "label", "fill", "write_spec", *local_files.FLAGS) if getattr(args, f)
    ]
    if len(handles) == 1 and handles[0].kind == "croissant":
        # --name names the dataset a Croissant file describes too, --fill fills its fields
        given = [f for f in given if f not in ("name", "fill")]
    if given and (len(handles) != 1 or handles[0].kind != "files"):
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{flag} is for one PATH of local files (catalog prepare PATH {flag} ...)")
    fill = _fills(args)

    def note(text: str) -> None:
        if not args.quiet:
            print(f"note: {text}", file=sys.stderr)

    builders: list[tuple[DatasetHandle, DatasetBuilder | None]] = []
    for name, handle in zip(args.names, handles, strict=True):
        if handle.kind == "croissant" or (handle.kind == "tfds" and handle.builder is None):
            builders.append((handle, None))  # made once the download settings are known
            continue
        if handle.kind != "files":
            if handle.builder is None:
                raise UsageError(
                    f"{name} is a prepared dataset no builder or stored spec describes "
                    f"({handle.target}): there is nothing to prepare it from"
                )
            if handle.kind == "registered" and is_path(name):
                print(
                    f"catalog: {name!r} is the registered dataset; to prepare the local {name}, "
                    f"write it as ./{name}",
                    file=sys.stderr,
                )
            builders.append((handle, handle.builder))
            continue
        b = files_builder(
            name,
            args.name,
            data_dir=handle.store,
            label=args.label,
            fill=fill,
            note=note,
            **local_files.infer_arguments(args),
        ).with_image_max_side(args.image_max_side)
        if args.write_spec:
            print(f"wrote {write_spec(b.spec, Path(args.write_spec))}", file=sys.stderr)
        builders.append((handle, b))
    return builders


def _fills(args: argparse.Namespace) -> dict[str, str]:
    fill = {}
    for item in args.fill or ():
        column, sep, value = item.partition("=")
        if not sep or not column:
            raise UsageError(f"--fill {item!r}: expected COLUMN=VALUE")
        fill[column] = value
    return fill


def _fetched_builder(
    handle: DatasetHandle, args: argparse.Namespace, config: DownloadConfig
) -> DatasetBuilder:
    """The builder of the dataset a Croissant file describes (its files fetched and read),
    or of ``tfds:NAME`` not prepared yet (TFDS's builder run: its files fetched, its
    examples counted)."""
    from catalog.api.croissant import croissant_builder

    location = handle.text
    if location.startswith(TFDS_PREFIX):
        from catalog.api.tfds import tfds_builder
        from catalog.formats.tfds.runtime import parse_name

        tfds = parse_name(location)
        assert tfds is not None  # it starts with tfds:
        return tfds_builder(
            tfds, data_dir=handle.store, download_dir=args.download_dir, download_config=config
        )

    return croissant_builder(
        location,
        data_dir=handle.store,
        download_dir=args.download_dir,
        download_config=config,
        name=args.name,
        fill=_fills(args),
    )


def run(args: argparse.Namespace) -> int:
    # Resolve every name first: a typo (DatasetNotFoundError) or a malformed spec (SpecError)
    # is a usage error, reported by main() before any work.
    # A Croissant file (path or URL, .json/.jsonld) is resolved once the download settings are
    # known: its spec is made by fetching and reading its files (None here).
    try:
        found = _builders(args)
    except (UsageError, local_files.LocalFilesUsageError) as exc:
        error(str(exc))
        return EXIT_USAGE
    # Deferred like DatasetBuilder.download_and_prepare's: `catalog list` and `catalog info`
    # must not pay for importing requests.
    from catalog.download import DownloadConfig, resolve_config

    try:  # a bad --mirror or $CATALOG_OFFLINE is a usage error too
        config = DownloadConfig(
            mirrors=args.mirror,
            offline=True if args.offline else None,
            manual_dir=args.manual_dir,
            register_checksums=args.register_checksums,
            progress=_progress(args),
        )
        resolve_config(config)
    except ValueError as exc:
        error(str(exc))
        return EXIT_USAGE
    try:
        builders = [
            b or _fetched_builder(handle, args, config).with_image_max_side(args.image_max_side)
            for handle, b in found
        ]
    except CatalogError as exc:  # a failed download of a Croissant file's data: one line
        short = None if args.verbose else summary(exc)
        error(str(exc) if short is None else f"{short}; {_MORE}")
        return exit_code(exc)
    if args.beam_pipeline_options is not None:
        from catalog.prepare.beam import parse_options

        if args.num_proc > 1:
            error("--num-proc and --beam-pipeline-options exclude each other: Beam has workers")
            return EXIT_USAGE
        try:
            parse_options(args.beam_pipeline_options)
        except ValueError as exc:
            error(str(exc))
            return EXIT_USAGE
    try:  # an unusable data or download dir is a usage error, found before any work
        generations = _check_dirs(builders, args, config)
    except CatalogError as exc:
        error(str(exc))
        return EXIT_USAGE
    pairs = zip(builders, generations, strict=True)
    entries = [_prepare_one(b, args, config, opened) for b, opened in pairs]
    failed = [dataset_name(b) for b, e in zip(builders, entries, strict=True) if e["error"]]
    codes = [_codes.pop(id(e), EXIT_FAILED) for e in entries if e["error"]]
    if args.json:
        print(json.dumps({"ok": not failed, "datasets": entries}, indent=2))
    if failed:
        print(
            f"catalog: {len(failed)} of {len(entries)} failed: {', '.join(failed)}", file=sys.stderr
        )
    if not failed:
        return EXIT_OK
    # some done, some failed: 1; nothing done: what stopped it (`EXIT_CODES`: 3 for bad data)
    return EXIT_FAILED if len(failed) < len(entries) else max(codes)


_codes: dict[int, int] = {}  # the exit code of each failed dataset's entry, by its id
