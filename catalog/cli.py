"""The `catalog` command: prepare datasets for CI, list what the catalog holds.

Exit codes: 0 everything asked for is prepared; 1 at least one dataset failed (the others
still run); 2 usage error (bad arguments, unknown dataset). Errors print one message on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from catalog import paths
from catalog._version import __version__
from catalog.builder import DatasetBuilder, builder
from catalog.errors import CatalogError, DatasetNotFoundError, SpecError
from catalog.registry import builder_dir, list_datasets
from catalog.spec import load_spec

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

_ENVIRONMENT = f"""\
environment:
  {paths.DATA_DIR_ENV}      data dir (default: the platform's user data dir)
  {paths.DOWNLOAD_DIR_ENV}  download cache (default: <data dir>/downloads)
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="catalog",
        description="Download, verify and prepare datasets; read them as NumPy, no TensorFlow.",
        epilog=_ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"catalog {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prepare = commands.add_parser(
        "prepare",
        help="download, verify and prepare datasets",
        description="Download, verify and prepare datasets into ArrayRecord files. A prepared "
        "dataset is reused without work.",
        epilog="example:\n  catalog prepare fashion_mnist mnist --data-dir ~/datasets\n\n"
        + _ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prepare.add_argument("names", nargs="+", metavar="NAME", help="dataset name or builder folder")
    prepare.add_argument("--data-dir", help=f"where prepared data goes (${paths.DATA_DIR_ENV})")
    prepare.add_argument("--download-dir", help=f"download cache (${paths.DOWNLOAD_DIR_ENV})")
    prepare.add_argument("--overwrite", action="store_true", help="prepare again even if prepared")

    commands.add_parser(
        "list",
        help="list the datasets in the catalog",
        description="List every registered dataset with its version and splits.",
        epilog="example:\n  catalog list",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _error(message: str) -> None:
    print(f"catalog: error: {message}", file=sys.stderr)


def _size(num_bytes: int) -> str:
    size = float(num_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _prepare_one(b: DatasetBuilder, args: argparse.Namespace) -> None:
    reused = b.is_prepared and not args.overwrite
    start = time.perf_counter()
    info = b.download_and_prepare(download_dir=args.download_dir, overwrite=args.overwrite)
    seconds = time.perf_counter() - start
    splits = ", ".join(f"{n} {s.num_examples}" for n, s in info.splits.items())
    size = _size(sum(s.num_bytes for s in info.splits.values()))
    status = "reused" if reused else f"prepared in {seconds:.1f} s"
    print(f"{b.name} {b.version}: {status}: {splits} examples, {size} -> {b.data_path}")


def _cmd_prepare(args: argparse.Namespace) -> int:
    try:  # resolve every name first: a typo is a usage error, caught before any work
        builders = [builder(name, data_dir=args.data_dir) for name in args.names]
    except DatasetNotFoundError as error:
        _error(str(error))
        return EXIT_USAGE
    failed = []
    for b in builders:
        try:
            _prepare_one(b, args)
        except (CatalogError, OSError) as error:
            failed.append(b.name)
            _error(f"{b.name}: {error}")
    if failed:
        print(
            f"catalog: {len(failed)} of {len(builders)} failed: {', '.join(failed)}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    for name in list_datasets():
        try:
            spec = load_spec(builder_dir(name))
        except SpecError as error:
            _error(str(error))
            return EXIT_FAILED
        splits = ", ".join(f"{s.name} {s.num_examples}" for s in spec.splits.values())
        print(f"{name:<20} {spec.version:<8} {splits}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "prepare":
            return _cmd_prepare(args)
        return _cmd_list(args)
    except CatalogError as error:
        _error(str(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
