"""`catalog prepare NAME...`: download, verify and prepare datasets, for people and CI."""

from __future__ import annotations

import argparse
import sys
import time

from catalog import paths
from catalog.builder import DatasetBuilder, builder
from catalog.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, add_command, error, size
from catalog.errors import CatalogError, DatasetNotFoundError

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
    parser.set_defaults(run=run)


def _prepare_one(b: DatasetBuilder, args: argparse.Namespace) -> None:
    reused = b.is_prepared and not args.overwrite
    start = time.perf_counter()
    info = b.download_and_prepare(download_dir=args.download_dir, overwrite=args.overwrite)
    seconds = time.perf_counter() - start
    splits = ", ".join(f"{n} {s.num_examples}" for n, s in info.splits.items())
    total = size(sum(s.num_bytes for s in info.splits.values()))
    status = "reused" if reused else f"prepared in {seconds:.1f} s"
    print(f"{b.name} {b.version}: {status}: {splits} examples, {total} -> {b.data_path}")


def run(args: argparse.Namespace) -> int:
    try:  # resolve every name first: a typo is a usage error, caught before any work
        builders = [builder(name, data_dir=args.data_dir) for name in args.names]
    except DatasetNotFoundError as exc:
        error(str(exc))
        return EXIT_USAGE
    failed = []
    for b in builders:
        try:
            _prepare_one(b, args)
        except (CatalogError, OSError) as exc:
            failed.append(b.name)
            error(f"{b.name}: {exc}")
    if failed:
        count = f"{len(failed)} of {len(builders)}"
        print(f"catalog: {count} failed: {', '.join(failed)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
