"""`catalog prepare NAME...`: download, verify and prepare datasets, for people and CI."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from catalog import paths
from catalog.builder import DatasetBuilder, builder
from catalog.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, add_command, error
from catalog.errors import CatalogError, DatasetNotFoundError
from catalog.units import format_size

if TYPE_CHECKING:
    from catalog.download import DownloadConfig

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        commands,
        "prepare",
        help="download, verify and prepare datasets",
        description="Download, verify and prepare datasets into ArrayRecord files. A prepared "
        "dataset is reused without work.",
        example="catalog prepare fashion_mnist mnist --data-dir ~/datasets",
    )
    parser.add_argument("names", nargs="+", metavar="NAME", help="dataset name or builder folder")
    parser.add_argument("--data-dir", help=f"where prepared data goes (${paths.DATA_DIR_ENV})")
    parser.add_argument("--download-dir", help=f"download cache (${paths.DOWNLOAD_DIR_ENV})")
    parser.add_argument("--overwrite", action="store_true", help="prepare again even if prepared")
    parser.add_argument(
        "--mirror",
        action="append",
        metavar="URL_OR_DIR",
        help="a mirror tried before the files' own URLs, holding <mirror>/<host>/<path of the "
        f"URL>; repeat for more (${paths.MIRRORS_ENV})",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help=f"never use the network: only the cache, mirror dirs, the manual dir "
        f"(${paths.OFFLINE_ENV}=1)",
    )
    parser.add_argument(
        "--manual-dir", help="files placed by hand, by original file name (<download dir>/manual)"
    )
    parser.add_argument(
        "--register-checksums",
        action="store_true",
        help="for builder authors: record new or changed downloads in the builder's checksums.tsv",
    )
    parser.set_defaults(run=run)


def _prepare_one(b: DatasetBuilder, args: argparse.Namespace, config: DownloadConfig) -> None:
    reused = b.is_prepared and not args.overwrite and not config.register_checksums
    start = time.perf_counter()
    info = b.download_and_prepare(
        download_dir=args.download_dir, overwrite=args.overwrite, download_config=config
    )
    seconds = time.perf_counter() - start
    splits = ", ".join(f"{n} {s.num_examples}" for n, s in info.splits.items())
    total = format_size(sum(s.num_bytes for s in info.splits.values()))
    status = "reused" if reused else f"prepared in {seconds:.1f} s"
    print(f"{b.name} {b.version}: {status}: {splits} examples, {total} -> {b.data_path}")


def run(args: argparse.Namespace) -> int:
    try:  # resolve every name first: a typo is a usage error, caught before any work
        builders = [builder(name, data_dir=args.data_dir) for name in args.names]
    except DatasetNotFoundError as exc:
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
        )
        resolve_config(config)
    except ValueError as exc:
        error(str(exc))
        return EXIT_USAGE
    failed = []
    for b in builders:
        try:
            _prepare_one(b, args, config)
        except (CatalogError, OSError) as exc:
            failed.append(b.name)
            error(f"{b.name}: {exc}")
    if failed:
        count = f"{len(failed)} of {len(builders)}"
        print(f"catalog: {count} failed: {', '.join(failed)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
